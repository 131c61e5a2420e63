"""Names that follow what processes and threads call themselves, and user-defined states
summed per network (docs/net.md "Process names", "User-defined states").
Run: names_test.py subject|exec|states|postgres|nginx|subject_linked|states_linked."""
import glob
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, os.path.join(HERE, "..", "logmodel"))
from vigil_testlib import (BIN, VIGIL, Failure, bt2_events, check, dump_json, main,  # noqa: E402
                           run, tmpdir)

SUBJECT = os.path.join(BIN, "names_subject")


LINKED = False  # *_linked: the subject records itself (VIGIL_OUT), as under the sanitizers


def record(args, stdin=None):
    trace = os.path.join(tmpdir("names"), "trace")
    if LINKED:
        run([SUBJECT, *args], env={"VIGIL_OUT": trace}, check_rc=0, input=stdin)
    else:
        run([VIGIL, "record", "-q", "-o", trace, "--", SUBJECT, *args], check_rc=0,
            input=stdin)
    events, d = dump_json(trace)
    check(d.returncode == 0, f"vigil dump: {d.stderr}")
    return trace, events


def query(trace, text):
    p = run([VIGIL, "query", trace, "--format", "json", "-e", text], check_rc=0)
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def timeline(rows):
    """(name, from, to) of an entity relation's tuples, in time order."""
    return sorted(((r["values"]["name"], r["from"], r["to"]) for r in rows),
                  key=lambda x: x[1])


def expected_timeline(begin, renames, end):
    """The name valid over time, from the begin event, the renames and the end."""
    out, name, since = [], begin[1], begin[0]
    for ts, new in renames:
        if new != name:
            out.append((name, since, ts))
            name, since = new, ts
    out.append((name, since, end))
    return out


def test_subject():
    trace, ev = record(["names"])
    pid = next(e["pid"] for e in ev if e["name"] == "vg.process.begin")
    marks = {e["fields"]["off"]: e["ts"] for e in ev
             if e["name"] == "vg.net.send" and e["fields"]["len"] == 1}
    check(sorted(marks) == list(range(7)), f"markers: {sorted(marks)}")

    def between(ts, k, what):
        check(marks[k] < ts < marks[k + 1],
              f"{what} at {ts}, not between marker {k} ({marks[k]}) and {k + 1} ({marks[k + 1]})")

    # the process: its begin, then what it called itself, with the moments it did
    pbegin = next(e for e in ev if e["name"] == "vg.process.begin")
    pend = next(e for e in ev if e["name"] == "vg.process.end")
    pren = [(e["ts"], e["fields"]["name"]) for e in ev if e["name"] == "vg.process.name"]
    check([n for _, n in pren] == ["m-prctl", "names: title one", "names: title two"],
          f"process renames: {pren}")
    between(pren[0][0], 0, "prctl(PR_SET_NAME)")
    between(pren[1][0], 3, "the first argv title")  # noticed at marker 4's write
    between(pren[2][0], 4, "the second argv title")  # noticed at poll()
    # threads: the main thread by prctl; the worker by itself and by main
    tbeg = {e["fields"]["tid"]: e for e in ev if e["name"] == "vg.thread.begin"}
    check(len(tbeg) == 2, f"threads: {list(tbeg)}")
    worker = next(t for t in tbeg if t != pid)
    tren = {t: [(e["ts"], e["fields"]["name"]) for e in ev
                if e["name"] == "vg.thread.name" and e["fields"]["tid"] == t] for t in tbeg}
    check([n for _, n in tren[pid]] == ["m-prctl"], f"main thread renames: {tren[pid]}")
    between(tren[pid][0][0], 0, "the main thread's prctl")
    check(tbeg[worker]["fields"]["name"] == "m-prctl",
          f"a new thread starts with its creator's name: {tbeg[worker]['fields']}")
    check([n for _, n in tren[worker]] == ["w-self", "w-by-main"],
          f"worker renames: {tren[worker]}")
    check(tbeg[worker]["ts"] < tren[worker][0][0] < marks[2], "w-self before marker 2")
    between(tren[worker][1][0], 2, "pthread_setname_np of the worker by main")
    by_main = next(e for e in ev if e["name"] == "vg.thread.name" and
                   e["fields"]["name"] == "w-by-main")
    check(by_main["tid"] == pid, "the worker's rename by main is recorded by main")

    # babeltrace2 reads the same renames at the same times
    bt, _ = bt2_events(trace)
    bt_ren = [(ts, f["name"]) for ts, name, f in bt if name == "vg.process.name"]
    check(bt_ren == pren, f"babeltrace2: {bt_ren}\nvigil dump: {pren}")
    bt_tren = sorted((ts, f["tid"], f["name"]) for ts, name, f in bt if name == "vg.thread.name")
    check(bt_tren == sorted((ts, t, n) for t in tren for ts, n in tren[t]),
          f"babeltrace2 thread renames: {bt_tren}")

    # TQuel: the entity relations hold the name valid over time
    got = timeline(query(trace, f"range of P is OSProcess retrieve (P.name) where P.id = {pid}"))
    want = expected_timeline((pbegin["ts"], pbegin["fields"]["name"]), pren, pend["ts"])
    check(got == want, f"Process relation:\n  got  {got}\n  want {want}")
    for t in tbeg:
        tend = next(e["ts"] for e in ev if e["name"] == "vg.thread.end" and e["tid"] == t)
        got = timeline(query(trace, f"range of T is OSThread retrieve (T.name) where T.id = {t}"))
        want = expected_timeline((tbeg[t]["ts"], tbeg[t]["fields"]["name"]), tren[t], tend)
        check(got == want, f"Thread {t} relation:\n  got  {got}\n  want {want}")
    # ... and a query over time gives the name a process had at each marker
    rows = query(trace, "range of P is OSProcess range of S is vg.net.send "
                        "retrieve N (Name = P.name, Off = S.off) "
                        f"where P.id = {pid} and S.len = 1 when P overlap S")
    got = {r["values"]["Off"]: r["values"]["Name"] for r in rows}
    want = {0: "names_subject", 1: "m-prctl", 2: "m-prctl", 3: "m-prctl",
            4: "names: title one", 5: "names: title two", 6: "names: title two"}
    check(got == want, f"names at the markers: {got}")


def test_exec():
    """exec: the process is then called what the new program is called."""
    trace = os.path.join(tmpdir("names-exec"), "trace")
    run([VIGIL, "record", "-q", "-o", trace, "--", "/bin/sh", "-c", f"exec {SUBJECT} names"],
        check_rc=0)
    ev, _ = dump_json(trace)
    pid = next(e["pid"] for e in ev if e["name"] == "vg.process.begin")
    begin = next(e for e in ev if e["name"] == "vg.process.begin")
    exe = next(e for e in ev if e["name"] == "vg.process.exec")
    ren = [(e["ts"], e["fields"]["name"]) for e in ev if e["name"] == "vg.process.name"]
    check(begin["fields"]["name"] == "sh" and ren and ren[0][1] == "names_subject" and
          ren[0][0] > exe["ts"], f"begin {begin['fields']}, exec at {exe['ts']}, renames {ren}")
    end = next(e["ts"] for e in ev if e["name"] == "vg.process.end")
    got = timeline(query(trace, f"range of P is OSProcess retrieve (P.name) where P.id = {pid}"))
    want = expected_timeline((begin["ts"], "sh"), ren, end)
    check(got == want, f"Process relation across exec:\n  got  {got}\n  want {want}")


def test_states():
    trace, ev = record(["states"], stdin="go\n")
    nets = tmpdir("names-nets")
    shutil.rmtree(nets)
    run([VIGIL, "net", "split", trace, "-o", nets], check_rc=0)
    files = sorted(glob.glob(os.path.join(nets, "net-*.json")))
    check(len(files) == 1, f"{len(files)} networks, expected 1 (the line read from stdin)")
    with open(files[0]) as f:
        net = json.load(f)
    pid = next(e["pid"] for e in ev if e["name"] == "vg.process.begin")
    worker = next(e["fields"]["tid"] for e in ev
                  if e["name"] == "vg.thread.begin" and e["fields"]["tid"] != pid)
    th = {t["tid"]: t for t in net["threads"]}
    check(sorted(th) == sorted([pid, worker]), f"threads of the network: {net['threads']}")
    check(th[pid]["program"] == "names: serving" and th[worker]["program"] == "names: serving",
          f"the process is named by its title: {net['threads']}")
    check(th[worker]["name"] == "disk-worker", f"the worker named by main: {th[worker]}")
    # the raw state intervals, per thread: which thread went through which phase is the
    # subject's (main: parse, reply, done; worker: disk, idle)
    owner = {"parse": pid, "reply": pid, "done": pid, "disk": worker, "idle": worker}
    rows = query(trace, "range of P is ThreadPhase retrieve (P.phase)")
    check(sorted(r["values"]["phase"] for r in rows) == sorted(owner),
          f"ThreadPhase tuples: {rows}")
    span = {}
    for v in net["vertices"]:
        lo, hi = span.get(v["tid"], (v["ts"], v["ts"]))
        span[v["tid"]] = (min(lo, v["ts"]), max(hi, v["ts"]))
    want = {}
    for r in rows:
        lo, hi = span[owner[r["values"]["phase"]]]
        d = min(r["to"], hi) - max(r["from"], lo)
        if d > 0:
            want["ThreadPhase=" + r["values"]["phase"]] = d
    p = run([VIGIL, "net", "report", "--json", files[0]], check_rc=0)
    got = {k: round(v * 1e6) for k, v in
           json.loads(p.stdout)["networks"][0]["states_ms"].items()}
    check(got == want, f"states per network:\n  got  {got}\n  want {want}")
    # parse and disk lie wholly inside the network: their whole raw durations
    for ph in ("parse", "disk"):
        r = next(r for r in rows if r["values"]["phase"] == ph)
        check(got["ThreadPhase=" + ph] == r["to"] - r["from"], f"{ph}: {got} vs {r}")
    text = run([VIGIL, "net", "report", files[0]], check_rc=0).stdout
    check("ThreadPhase=parse" in text and "(disk-worker)" in text, f"report:\n{text}")
    # a network file whose states overlap is refused with one line, not summed
    bad = os.path.join(nets, "bad.json")
    t = next(t for t in net["threads"] if len(t.get("states", [])) > 1)
    t["states"][1]["from"] = t["states"][0]["from"]
    with open(bad, "w") as f:
        json.dump(net, f)
    p = run([VIGIL, "net", "report", bad])
    check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and
          "thread state" in p.stderr, f"overlapping states: {p.returncode} {p.stderr}")
    svg = os.path.join(nets, "n.svg")
    run([VIGIL, "net", "render", files[0], "--svg", svg], check_rc=0)
    with open(svg) as f:
        s = f.read()
    check("ThreadPhase=disk" in s and "names: serving" in s, "the picture shows states and names")


def pg_bin():
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    dirs = [d for d in dirs if os.path.exists(os.path.join(d, "initdb"))]
    if not dirs:
        if os.environ.get("CI") == "true":
            raise Failure("PostgreSQL is not installed (scripts/install-deps.sh)")
        print("skip: PostgreSQL is not installed")
        sys.exit(77)
    return dirs[-1]


def test_postgres():
    import pgharness

    pg = pgharness.PgServer(pg_bin(), BIN)
    passed = False
    try:
        pg.initdb({"fsync": "off", "update_process_title": "on"})
        trace = pg.path("trace")
        pg.start(record=trace)
        check(pg.psql("select 41 + 1").stdout.strip() == "42", "psql answered")
        pg.stop()
        ev, d = dump_json(trace)
        check(d.returncode == 0, f"vigil dump: {d.stderr}")
        begin = {e["fields"]["pid"]: e for e in ev if e["name"] == "vg.process.begin"}
        end = {e["fields"]["pid"]: e["ts"] for e in ev if e["name"] == "vg.process.end"}
        ren = {}
        for e in ev:
            if e["name"] == "vg.process.name":
                ren.setdefault(e["fields"]["pid"], []).append((e["ts"], e["fields"]["name"]))
        titles = {p: [n.strip() for _, n in r] for p, r in ren.items()}

        def named(pred):
            return [p for p, t in titles.items() if any(pred(n) for n in t)]

        ckpt = named(lambda n: n == "postgres: checkpointer")
        walw = named(lambda n: n == "postgres: walwriter")
        check(len(ckpt) == 1 and len(walw) == 1,
              f"one checkpointer, one WAL writer: titles {titles}")
        # psql's backend, and pg_isready's (the harness waits with it)
        backends = named(lambda n: n.startswith("postgres: postgres postgres [local]"))
        check(backends, f"no backend titled 'postgres: USER DB [local] ...': {titles}")
        check(len(set(ckpt + walw + backends)) == 2 + len(backends), "distinct processes")
        for p in ckpt + walw + backends:
            # the name before the rename is what the kernel called it; each rename is
            # later than the process's begin and the Process relation has both
            b = begin[p]
            check(b["fields"]["name"] == "postgres", f"{p} began as {b['fields']['name']}")
            check(all(b["ts"] < ts for ts, _ in ren[p]), f"{p}: rename before its begin")
            rows = query(trace, f"range of P is OSProcess retrieve (P.name) where P.id = {p}")
            got = timeline(rows)
            want = expected_timeline((b["ts"], "postgres"), ren[p], end.get(p, got[-1][2]))
            check(got == want, f"Process {p}:\n  got  {got}\n  want {want}")
        passed = True
    finally:
        if passed:
            pg.cleanup()
        else:
            pg.stop()
            print(f"kept {pg.dir}")


def test_nginx():
    """Debian's nginx (2 workers) recorded with curl: the master and its workers named by
    their titles, and the network of each request names its server so."""
    sys.path.insert(0, os.path.join(HERE, "..", "net", "record"))
    import nginx_server
    curl = shutil.which("curl")
    if not (os.path.exists(nginx_server.NGINX) and curl):
        if os.environ.get("CI") == "true":
            raise Failure("nginx and curl are not installed (scripts/install-deps.sh)")
        print("skip: nginx or curl is not installed")
        sys.exit(77)
    d = tmpdir("names-nginx")
    conf, port = nginx_server.make(d, {"index.html": b"<p>named</p>\n"}, workers=2)
    url = f"http://127.0.0.1:{port}/index.html"
    script = f"""
{' '.join(f"'{a}'" for a in nginx_server.command(conf, d))} &
ok=0
for i in $(seq 400); do
  [ -s {d}/nginx.pid ] && {curl} -s -o /dev/null {url} && ok=1 && break; sleep 0.05
done
[ $ok = 1 ] || {{ echo nginx did not answer >&2; kill $!; wait; exit 1; }}
rc=0
for i in 1 2 3; do {curl} -s -o /dev/null {url} || rc=1; done
kill -QUIT $(cat {d}/nginx.pid)
wait
exit $rc
"""
    trace = os.path.join(d, "trace")
    run([VIGIL, "record", "-q", "-o", trace, "--", "sh", "-c", script], check_rc=0, timeout=100)
    ev, _ = dump_json(trace)
    begin = {e["fields"]["pid"]: e for e in ev if e["name"] == "vg.process.begin"}
    ren = {}
    for e in ev:
        if e["name"] == "vg.process.name":
            ren.setdefault(e["fields"]["pid"], []).append(e["fields"]["name"])
    master = [p for p, r in ren.items() if any(n.startswith("nginx: master process ") for n in r)]
    workers = [p for p, r in ren.items() if "nginx: worker process" in r]
    check(len(master) == 1 and len(workers) == 2, f"nginx titles: {ren}")
    # names over time: the shell that exec'd the master, then nginx, then its title
    seq = {p: [begin[p]["fields"]["name"]] + ren[p] for p in master + workers}
    check(seq[master[0]][:2] == ["sh", "nginx"] and len(seq[master[0]]) == 3,
          f"master: {seq[master[0]]}")
    for p in workers:
        # (on SIGQUIT a worker calls itself "nginx: worker process is shutting down")
        check(seq[p][:2] == ["nginx", "nginx: worker process"] and
              set(seq[p][2:]) <= {"nginx: worker process is shutting down"},
              f"worker {p}: {seq[p]}")
    nets = os.path.join(d, "nets")
    run([VIGIL, "net", "split", trace, "-o", nets], check_rc=None)
    rep = json.loads(run([VIGIL, "net", "report", "--json", nets], check_rc=0).stdout)
    served = [n for n in rep["networks"] if n["servers"] == "curl > nginx: worker process"]
    check(len(served) >= 4, "each curl request's network names nginx's worker by its title: "
          f"{sorted(n['servers'] for n in rep['networks'])}")


def linked(test):
    def t():
        global LINKED
        LINKED = True
        test()
    return t


if __name__ == "__main__":
    main({"subject": test_subject, "exec": test_exec, "states": test_states,
          "postgres": test_postgres, "nginx": test_nginx, "subject_linked": linked(test_subject),
          "states_linked": linked(test_states)})
