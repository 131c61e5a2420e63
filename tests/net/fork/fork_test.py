"""Forking servers from Debian, recorded unmodified with their clients and split together
(docs/net.md "Forking servers", "What one input is"): PostgreSQL (the postmaster accepts,
forks a backend that serves the connection) on its Unix socket and over TCP under psql and
pgbench -C; openbsd-inetd (accepts, forks, execs the service with the connection as its
stdin and stdout) over TCP and a Unix socket. Every client connection must be one network
(the default unit for recorded clients) that begins at the client's connect and holds the
client, the server's accept, the child from its start (a spawn edge from the accept) to
its exit, and every byte sent in it received, with nothing unmatched.
Run: fork_test.py NAME."""
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "e2e"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "logmodel"))
from vigil_testlib import VIGIL, check, main, run, tmpdir  # noqa: E402

BIN = os.environ.get("VIGIL_BIN", "build/bin")
CLIENTS = 5  # psql runs; pgbench transactions (-C: a connection each)


def skip(why):
    print(f"skipped: {why} (scripts/install-deps.sh)")
    if os.environ.get("CI") == "true":
        sys.exit(1)
    sys.exit(77)


def split(traces):
    out = os.path.join(tmpdir("nets"), "nets")
    run([VIGIL, "net", "split", *traces, "-o", out], check_rc=0)
    with open(os.path.join(out, "index.json")) as f:
        index = json.load(f)
    nets = {}
    for n in index["networks"]:
        with open(os.path.join(out, n["file"])) as f:
            nets[n["network"]] = json.load(f)
    rep = json.loads(run([VIGIL, "net", "report", "--json", out], check_rc=0).stdout)
    return index, nets, {n["network"]: n for n in rep["networks"]}


def connects(trace, program):
    """How many connections `program` opened in the trace (vigil dump)."""
    p = run([VIGIL, "dump", "--json", trace], check_rc=0)
    n = 0
    for line in p.stdout.splitlines():
        e = json.loads(line)
        if e.get("name") == "vg.net.conn" and e.get("fields", e).get("role") == "connect":
            n += 1
    return n


def check_client_networks(index, nets, rep, client, server, want):
    """Every network of `client`: the whole connection, the server's accept, the forked
    child's life, every byte sent received. Returns the number of such networks."""
    mine = [n for n in index["networks"] if n["program"] == client]
    check(len(mine) == want, f"{len(mine)} networks of {client}, {want} expected: "
          f"{[(n['input'], n['program']) for n in index['networks']]}")
    parents = set()
    for entry in mine:
        net = nets[entry["network"]]
        vs = net["vertices"]
        what = f"{client} network {entry['network']}"
        check(entry["input"] == "connect" and vs[net["input"]]["kind"] == "conn",
              f"{what}: begins at {vs[net['input']]['kind']}, not the client's connect")
        accepts = [v for v in vs if v["kind"] == "conn" and v["program"] == server]
        check(len(accepts) == 1, f"{what}: {len(accepts)} accepts of {server}")
        acc = accepts[0]
        parents.add(acc["pid"])
        kids = {v["pid"] for v in vs if v["kind"] == "process.begin" and v["pid"] != acc["pid"]}
        check(len(kids) == 1, f"{what}: forked children {kids}")
        kid = kids.pop()
        begin = next(v for v in vs if v["kind"] == "process.begin" and v["pid"] == kid)
        check(any(v["kind"] == "process.end" and v["pid"] == kid for v in vs),
              f"{what}: the child's exit is not in it")
        check(any(e["kind"] == "spawn" and e["from"] == acc["id"] and e["to"] == begin["id"]
                  for e in net["edges"]), f"{what}: no spawn edge from the accept")
        check(acc["ts"] <= begin["ts"] and vs[net["input"]]["ts"] <= acc["ts"],
              f"{what}: connect, accept, fork out of order")
        check({t["pid"] for t in net["threads"]} == {acc["pid"], kid, vs[net["input"]]["pid"]},
              f"{what}: threads {net['threads']}")
        r = rep[entry["network"]]
        sent = sum(v["len"] for v in vs if v["kind"] == "send")
        check(r["unmatched"] == 0 and r["messages"] > 0 and r["bytes"] == sent,
              f"{what}: {r['unmatched']} unmatched, {r['bytes']} of {sent} bytes received")
    check(len(parents) == 1, f"accepts by several processes: {parents}")
    return len(mine)


# ---- PostgreSQL ----

def pg_bin():
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if all(os.path.exists(os.path.join(d, b)) for b in ("initdb", "postgres", "pgbench")):
            return d
    return None


def pg_case(tcp):
    from pgharness import PgServer, PgError

    bindir = pg_bin()
    if not bindir:
        skip("PostgreSQL (postgresql) not installed")
    pg = PgServer(bindir, BIN, keep=tmpdir("pgfork"))
    cdir = tmpdir("pgclients")
    host = "127.0.0.1" if tcp else pg.dir
    try:
        pg.initdb({"listen_addresses": "'127.0.0.1'"} if tcp else {})
        pg.start(record=pg.path("srv"))
        pg.as_user([pg.bin("pgbench"), "-i", "-q", "-h", pg.dir, "-p", pg.port, "-U",
                    "postgres", "postgres"])  # not recorded: its own networks (accept)
        traces = [pg.path("srv")]
        # the clients' own output goes to files (not followed): on a pipe to this test,
        # which is not recorded, it would be unmatched
        for i in range(CLIENTS):
            t, res = os.path.join(cdir, f"psql{i}"), os.path.join(cdir, f"psql{i}.out")
            run([VIGIL, "record", "-q", "-o", t, "--", pg.bin("psql"), "-h", host, "-p",
                 pg.port, "-U", "postgres", "-X", "-At", "-o", res, "-c",
                 f"select {1000 + i}", "postgres"], check_rc=0)
            with open(res) as f:
                got = f.read()
            check(got.strip() == str(1000 + i), f"psql answered {got!r}")
            traces.append(t)
        bench, res = os.path.join(cdir, "pgbench"), os.path.join(cdir, "pgbench.out")
        run([VIGIL, "record", "-q", "-o", bench, "--", "sh", "-c", 'exec "$@" >"$0" 2>&1',
             res, pg.bin("pgbench"), "-h", host, "-p", pg.port, "-U", "postgres", "-n", "-C",
             "-c", "1", "-t", str(CLIENTS), "postgres"], check_rc=0)
        with open(res) as f:
            got = f.read()
        check(f"number of transactions actually processed: {CLIENTS}/{CLIENTS}" in got,
              f"pgbench: {got}")
        traces.append(bench)
    except PgError as e:
        check(False, f"PostgreSQL: {e}")
    finally:
        pg.stop()
    index, nets, rep = split(traces)
    check_client_networks(index, nets, rep, "psql", "postgres", CLIENTS)
    nb = connects(bench, "pgbench")
    check(nb >= CLIENTS, f"pgbench opened {nb} connections, {CLIENTS} transactions")
    check_client_networks(index, nets, rep, "pgbench", "postgres", nb)
    # what is unmatched is the traffic of the clients not recorded (pg_isready, pgbench
    # -i), each in a network of its own begun by the backend's receive
    for u in index["unmatched"]:
        n = u["network"]
        check(n is not None and index["networks"][n - 1]["input"] == "accept" and
              u["program"].startswith("postgres"), f"unmatched: {u}")  # its title, or not yet
    check(index["backwards"] == 0 and index["forced"] == 0,
          f"backwards {index['backwards']}, forced {index['forced']}")


def test_pg_unix():
    pg_case(False)


def test_pg_tcp():
    pg_case(True)


# ---- openbsd-inetd ----

ECHO_CLIENT = r"""
import socket, sys
where, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for i in range(n):
    if where.startswith("/"):
        c = socket.socket(socket.AF_UNIX)
        c.connect(where)
    else:
        c = socket.create_connection(("127.0.0.1", int(where)))
    msg = b"line %d of the echo test\n" % i
    c.sendall(msg)
    got = b""
    while len(got) < len(msg):
        got += c.recv(100)
    assert got == msg, got
    c.close()
with open(out, "w") as f:  # a file: not followed (a pipe to the test would be unmatched)
    f.write("ok %d" % n)
"""


def inetd_case(unix):
    inetd = "/usr/sbin/inetd"
    if not os.path.exists(inetd):
        skip("openbsd-inetd not installed")
    d = tmpdir("inetd")
    if unix:
        where = os.path.join(d, "echo.sock")
        line = f"{where} stream unix nowait root /bin/cat cat\n"
    else:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            where = str(s.getsockname()[1])
        line = f"127.0.0.1:{where} stream tcp nowait root /bin/cat cat\n"
    conf = os.path.join(d, "inetd.conf")
    with open(conf, "w") as f:
        f.write(line)
    srv = os.path.join(d, "srv")
    log = open(os.path.join(d, "inetd.out"), "w")
    # -d: in the foreground; -E: keep the environment (inetd discards LD_PRELOAD, which
    # the exec'd services need to be recorded: docs/net.md)
    p = subprocess.Popen([VIGIL, "record", "-q", "-o", srv, "--", inetd, "-d", "-E", conf],
                         stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 30
        while True:  # listening? (a probe that sends nothing: no I/O, in no network)
            check(p.poll() is None and time.time() < deadline, "inetd did not start")
            try:
                with socket.socket(socket.AF_UNIX if unix else socket.AF_INET) as s:
                    s.connect(where if unix else ("127.0.0.1", int(where)))
                break
            except OSError:
                time.sleep(0.05)
        cli = os.path.join(d, "client")
        script = os.path.join(d, "client.py")
        with open(script, "w") as f:
            f.write(ECHO_CLIENT)
        res = os.path.join(d, "client.out")
        r = run([VIGIL, "record", "-q", "-o", cli, "--", "/usr/bin/python3", script, where,
                 str(CLIENTS), res], check_rc=0)
        with open(res) as f:
            got = f.read()
        check(got == f"ok {CLIENTS}", f"client: {got} {r.stderr}")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
        log.close()
    index, nets, rep = split([srv, cli])
    check_client_networks(index, nets, rep, "python3", "inetd", CLIENTS)
    check(index["unmatched"] == [], f"unmatched: {index['unmatched']}")
    # the child is inetd's fork, then cat (exec): the exec, cat's receive and send
    for n in nets.values():
        vs = n["vertices"]
        kid = next(v["pid"] for v in vs if v["kind"] == "process.exec")
        io = [v["kind"] for v in vs if v["kind"] in ("recv", "send") and v["pid"] == kid]
        check(sorted(io) == ["recv", "send"], f"network {n['network']}: cat's I/O {io}")


def test_inetd_tcp():
    inetd_case(False)


def test_inetd_unix():
    inetd_case(True)


if __name__ == "__main__":
    main({"pg_unix": test_pg_unix, "pg_tcp": test_pg_tcp, "inetd_tcp": test_inetd_tcp,
          "inetd_unix": test_inetd_unix})
