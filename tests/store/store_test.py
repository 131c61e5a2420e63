"""vigil store against a real PostgreSQL server (Debian's binaries) started here on a free
loopback port in a temporary directory: a mailbox recording is stored, and every
relation's row count and values in PostgreSQL equal what `vigil relations` and `vigil
query` answer over the same trace; storing again adds nothing; the collector's entry
point (vgs_pg_store_image, through tests/store/store_image.c) stores another image; a bad
URL gives one clear line and exit status 2.

usage: store_test.py BIN_DIR PG_BIN"""
import json
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "logmodel"))
from pgharness import PgServer  # noqa: E402

BIN, PG_BIN = sys.argv[1], sys.argv[2]
VIGIL = os.path.join(BIN, "vigil")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def record(out, seed, messages):
    r = run([VIGIL, "record", "-q", "-o", out, "--", os.path.join(BIN, "mailbox"),
             "--processors", "2", "--processes", "6", "--mailboxes", "3", "--messages",
             str(messages), "--seed", str(seed)])
    if r.returncode:
        sys.exit("vigil record failed: " + r.stderr)


def relations(trace):
    r = run([VIGIL, "relations", "--json", trace])
    return [json.loads(line) for line in r.stdout.splitlines()
            if json.loads(line)["name"] != "Clock"]


def vigil_tuples(trace, rel):
    """The relation's tuples as vigil query answers them: sorted (values..., times)."""
    names = [a["name"] for a in rel["attributes"]]
    targets = ", ".join("%s = R.%s" % (n, n) for n in names)
    r = run([VIGIL, "query", trace, "-e",
             "range of R is %s retrieve Q (%s)" % (rel["name"], targets), "--format", "json"])
    if r.returncode:
        failures.append("vigil query %s: %s" % (rel["name"], r.stderr))
        return []
    out = []
    for line in r.stdout.splitlines():
        o = json.loads(line)
        times = (o["at"],) if o["kind"] == "event" else (o["from"], o["to"])
        out.append(tuple(str(o["values"][n]) for n in names) + tuple(str(t) for t in times))
    return sorted(out)


def pg_tuples(pg, rel):
    """The same from PostgreSQL: entity columns as the name, else Kind#id."""
    cols = []
    for a in rel["attributes"]:
        n = '"%s"' % a["name"]
        if a["type"] == "entity":
            cols.append("coalesce(%s, '%s#' || \"%s_id\")" % (n, a.get("entity") or "entity",
                                                             a["name"]))
        else:
            cols.append("%s::text" % n)
    cols += ["valid_at"] if rel["kind"] == "event" else ["valid_from", "valid_to"]
    r = pg.psql("SELECT %s FROM vigil.\"%s\"" % (", ".join(cols), rel["name"]))
    return sorted(tuple(line.split("|")) for line in r.stdout.splitlines())


def count(pg, table):
    return int(pg.psql('SELECT count(*) FROM vigil."%s"' % table).stdout.strip())


def main():
    tmp = tempfile.mkdtemp(prefix="vigil-store-")
    os.chmod(tmp, 0o755)
    t1, t2 = os.path.join(tmp, "run1"), os.path.join(tmp, "run2")
    record(t1, 7, 400)
    record(t2, 8, 150)
    pg = PgServer(PG_BIN, BIN)
    pg.port = str(free_port())
    try:
        pg.initdb({"listen_addresses": "'127.0.0.1'", "fsync": "off"})
        pg.start()
        url = "postgresql://postgres@127.0.0.1:%s/postgres" % pg.port

        # 1. Store, then compare every relation with vigil's answers.
        r = run([VIGIL, "store", t1, "--to", url, "--json"])
        check(r.returncode == 0, "vigil store exit %d: %s" % (r.returncode, r.stderr))
        stats = json.loads(r.stdout)
        check(stats["loaded"] == 1 and stats["skipped"] == 0, "first load: %s" % stats)
        print("store:", r.stdout.strip(), file=sys.stderr)
        rels = relations(t1)
        total = 0
        for rel in rels:
            n = count(pg, rel["name"])
            total += n
            check(n == rel["tuples"], "%s: %d rows, vigil relations says %d" %
                  (rel["name"], n, rel["tuples"]))
            if rel["tuples"] and "." not in rel["name"]:
                a, b = vigil_tuples(t1, rel), pg_tuples(pg, rel)
                check(a == b, "%s: values differ: vigil %s... postgres %s..." %
                      (rel["name"], a[:2], b[:2]))
        check(total == stats["rows"], "rows %d, tables hold %d" % (stats["rows"], total))
        check(sum(r["tuples"] for r in rels) > 500, "a trace with few tuples")
        # host and pid of the image, on every row, and the loads table
        host = pg.psql('SELECT DISTINCT vg_host FROM vigil."SendMessage"').stdout.split()
        check(host == [socket.gethostname()], "vg_host %s" % host)
        pid = pg.psql('SELECT DISTINCT vg_pid FROM vigil."Waiting"').stdout.split()
        check(len(pid) == 1 and os.path.isdir(os.path.join(t1, "mailbox-%s-0" % pid[0])),
              "vg_pid %s" % pid)
        check(pg.psql("SELECT count(*), sum(rows) FROM vigil.loads").stdout.strip() ==
              "1|%d" % total, "loads table")
        open_rows = pg.psql('SELECT count(*) FROM vigil."ProcessState" WHERE vg_open')
        ps = [x for x in rels if x["name"] == "ProcessState"][0]
        check(int(open_rows.stdout) == ps["open"], "vg_open %s vs %d" % (open_rows.stdout,
                                                                         ps["open"]))

        # 2. Storing again adds nothing.
        r = run([VIGIL, "store", t1, "--to", url, "--json"])
        stats2 = json.loads(r.stdout or "{}")
        check(r.returncode == 0 and stats2.get("skipped") == 1 and stats2.get("rows") == 0,
              "reload: %s %s" % (r.stdout, r.stderr))
        check(sum(count(pg, x["name"]) for x in rels) == total, "reload duplicated rows")

        # 3. The collector's entry point: one image of another trace, twice.
        img = [d for d in os.listdir(t2) if d.startswith("mailbox-")][0]
        for _ in range(2):
            r = run([os.path.join(BIN, "store_image"), url, t2, img])
            check(r.returncode == 0, "vgs_pg_store_image: %s" % r.stderr)
        n2 = sum(x["tuples"] for x in relations(t2))
        check(sum(count(pg, x["name"]) for x in rels) == total + n2,
              "store_image: expected %d more rows" % n2)
        check(pg.psql("SELECT count(*) FROM vigil.loads").stdout.strip() == "2", "loads: 2")

        # 4. Bad URLs and traces: one line, exit status 2.
        bad = [["--to", "postgresql://postgres@127.0.0.1:%d/postgres" % free_port()],
               ["--to", "mysql://localhost/x"],
               ["--to", "postgresql://postgres:secret@127.0.0.1:%s/nosuchdb" % pg.port]]
        for args in bad:
            r = run([VIGIL, "store", t1] + args)
            lines = r.stderr.splitlines()
            check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("vigil store: "),
                  "bad URL %s: exit %d, stderr %r" % (args[1], r.returncode, r.stderr))
            check("secret" not in r.stderr, "the password is shown: %r" % r.stderr)
        # Another schema; a table there whose column has another type: one line, exit 2,
        # the image rolled back whole (no loads row, no rows in the other tables).
        pg.psql('CREATE SCHEMA other; CREATE TABLE other."Waiting" (vg_load bigint, '
                'process integer)')
        r = run([VIGIL, "store", t1, "--to", url, "--schema", "other"])
        check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and
              "process is integer" in r.stderr, "type clash: %d %r" % (r.returncode, r.stderr))
        check(pg.psql("SELECT count(*) FROM other.loads").stdout.strip() == "0" and
              pg.psql('SELECT count(*) FROM other."SendMessage"').stdout.strip() == "0",
              "a failed load left rows")
        r = run([VIGIL, "store", os.path.join(tmp, "nothing"), "--to", url])
        check(r.returncode == 2 and len(r.stderr.splitlines()) == 1,
              "missing trace: %d %r" % (r.returncode, r.stderr))
    finally:
        pg.cleanup()
        if failures or sys.exc_info()[0] is not None:
            print("store_test: kept %s" % tmp, file=sys.stderr)
        else:
            subprocess.run(["rm", "-rf", tmp])
    if failures:
        sys.exit("%d failure(s)" % len(failures))
    print("ok")


main()
