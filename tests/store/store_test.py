"""vigil store against a real PostgreSQL server (Debian's binaries) started here on a free
loopback port in a temporary directory: a mailbox recording is stored, and every
relation's row count and values in PostgreSQL equal what `vigil relations` and `vigil
query` answer over the same trace; storing again adds nothing; the collector's entry
point (vgs_pg_store_image, through tests/store/store_image.c) stores another image; a bad
URL gives one clear line and exit status 2. Behaviour models (.vgm): a hand-written one and
one `vigil model --from-trace` makes of the recording are stored, and every event,
transition, probability and transition-time quantile in PostgreSQL equals what this test
computes from the files' own text; storing them again adds nothing; a damaged model among
good ones gives one line, exit status 2, and stores nothing.

usage: store_test.py BIN_DIR PG_BIN"""
import json
import math
import os
import socket
import subprocess
import sys
import tempfile

from store_testlib import PgServer, check, failures, free_port, run

BIN, PG_BIN = sys.argv[1], sys.argv[2]
VIGIL = os.path.join(BIN, "vigil")


def record(out, seed, messages):
    r = run([VIGIL, "record", "-q", "-o", out, "--", os.path.join(BIN, "mailbox"),
             "--processors", "2", "--processes", "6", "--mailboxes", "3", "--messages",
             str(messages), "--seed", str(seed)])
    if r.returncode:
        sys.exit("vigil record failed: " + r.stderr)


def relations(trace):
    r = run([VIGIL, "relations", "--json", trace])
    # (recorded ones: vigil store does not store derived relations, docs/tquel.md)
    return [json.loads(line) for line in r.stdout.splitlines()
            if json.loads(line)["name"] != "Clock" and "derived" not in json.loads(line)]


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


def bucket(ns):
    """src/common/sketch_index.h"""
    if ns < 64:
        return ns
    octave = ns.bit_length() - 1
    return (octave - 6 + 1) * 64 + ((ns >> (octave - 6)) & 63)


def bucket_value(b):
    if b < 64:
        return float(b)
    shift = b // 64 - 1
    width = 1 << shift
    return ((64 + b % 64) << shift) + (width / 2 if width > 1 else 0)


def parse_vgm(path):
    """events {id: (site, fmt, name, count)}, transitions {(from, to): (count, sum, {b: n})}"""
    events, names, trans = {}, {}, {}
    for line in open(path, encoding="utf-8").read().splitlines():
        f = line.split(" ")
        if f[0] == "event":
            q = line.index(' "')
            site = line[len(" ".join(f[:3])) + 1:q]
            events[int(f[1])] = [site, json.loads(line[q + 1:]), None, int(f[2])]
        elif f[0] == "name":
            names[int(f[1])] = json.loads(line.split(" ", 2)[2])
        elif f[0] == "transition":
            trans[(int(f[1]), int(f[2]))] = (int(f[3]), int(f[4]),
                                             {int(b): int(n) for b, n in
                                              (x.split(":") for x in f[5:])})
    for i, n in names.items():
        events[i][2] = n
    return events, trans


def quantile(hist, q):
    """nearest rank over the bucket values, as docs/model.md defines it"""
    total = sum(hist.values())
    rank = max(1, min(total, math.ceil(q * total))) if q > 0 else 1
    seen = 0
    for b in sorted(hist):
        seen += hist[b]
        if seen >= rank:
            return bucket_value(b)


def check_model(pg, path, mid):
    events, trans = parse_vgm(path)
    rows = pg.psql("SELECT event, site, fmt, coalesce(name, '<null>'), count, out FROM "
                   "vigil.model_events WHERE vg_model = %d ORDER BY event" % mid,
                   ).stdout.splitlines()
    out = {}
    for (i, j), (c, _, _) in trans.items():
        out[i] = out.get(i, 0) + c
    want = ["%d|%s|%s|%s|%d|%d" % (i, e[0], e[1], e[2] or "<null>", e[3], out.get(i, 0))
            for i, e in sorted(events.items())]
    check(rows == want, "%s: model_events %s... want %s..." % (path, rows[:2], want[:2]))
    rows = pg.psql("SELECT from_event, to_event, count, probability, sum_ns, timed FROM "
                   "vigil.model_transitions WHERE vg_model = %d ORDER BY 1, 2" % mid
                   ).stdout.splitlines()
    got = [r.split("|") for r in rows]
    want = sorted(trans.items())
    check(len(got) == len(want), "%s: %d transitions, want %d" % (path, len(got), len(want)))
    for g, ((i, j), (c, s, h)) in zip(got, want):
        check([int(x) for x in (g[0], g[1], g[2], g[4], g[5])] == [i, j, c, s, sum(h.values())]
              and float(g[3]) == c / out[i], "%s: transition %s want %s" % (path, g, (i, j, c)))
    rows = pg.psql("SELECT from_event, to_event, timed, mean_ns, min_ns, p50_ns, p90_ns, "
                   "p99_ns, max_ns FROM vigil.model_transition_times WHERE vg_model = %d "
                   "ORDER BY 1, 2" % mid).stdout.splitlines()
    timed = [(k, v) for k, v in want if v[2]]
    check(len(rows) == len(timed), "%s: %d timed rows, want %d" % (path, len(rows), len(timed)))
    for r, ((i, j), (c, s, h)) in zip(rows, timed):
        g = r.split("|")
        n = sum(h.values())
        mean = sum(bucket_value(b) * k for b, k in h.items()) / n
        qs = [quantile(h, q) for q in (0, 0.5, 0.9, 0.99, 1)]
        check([int(g[0]), int(g[1]), int(g[2])] == [i, j, n] and
              math.isclose(float(g[3]), mean, rel_tol=1e-12) and
              [float(x) for x in g[4:]] == qs,
              "%s: times %s want %s %s" % (path, g, mean, qs))
    return len(events), len(trans)


def models(pg, url, tmp, t1):
    hand = os.path.join(tmp, "hand.vgm")
    with open(hand, "w") as f:
        f.write("vigil-model 1\nsource store_test\n"
                'event 1 1000 a.c:10 "checkpoint \\t<n> \\\\ \\"q\\""\n'
                'event 2 700 a.c:20 "wrote <n> buffers"\nevent 3 300 b.c:5 "%%s"\n'
                'name 2 "buffers.written"\n'
                "transition 1 2 700 %d %s\ntransition 1 3 299 0\n"
                "transition 2 1 699 %d %s\n" % hand_times())
    fromtrace = os.path.join(tmp, "trace.vgm")
    r = run([VIGIL, "model", "--from-trace", t1, "-o", fromtrace])
    check(r.returncode == 0, "vigil model --from-trace: %s" % r.stderr)
    r = run([VIGIL, "store", hand, fromtrace, "--to", url, "--json", "-q"])
    st = json.loads(r.stdout or "{}")
    check(r.returncode == 0 and st.get("models_loaded") == 2,
          "store models: %d %s %s" % (r.returncode, r.stdout, r.stderr))
    ids = dict(line.split("|")[::-1] for line in pg.psql(
        "SELECT id, path FROM vigil.models").stdout.splitlines())
    check(set(ids) == {os.path.realpath(hand), os.path.realpath(fromtrace)}, "models %s" % ids)
    sizes = [check_model(pg, p, int(ids[os.path.realpath(p)])) for p in (hand, fromtrace)]
    check(sizes[0] == (3, 3) and sizes[1][1] > 3, "model sizes %s" % sizes)
    key = pg.psql("SELECT model_key FROM vigil.models WHERE path = '%s'" %
                  os.path.realpath(hand)).stdout.strip()
    import hashlib
    check(key == hashlib.sha256(open(hand, "rb").read()).hexdigest(), "model_key %s" % key)
    tables = ["models", "model_events", "model_transitions", "model_transition_times"]

    def counts():
        return [count(pg, t) for t in tables]
    before = counts()
    # Again (also under another name): nothing twice.
    copy = os.path.join(tmp, "copy.vgm")
    subprocess.run(["cp", hand, copy])
    r = run([VIGIL, "store", hand, fromtrace, copy, "--to", url, "--json", "-q"])
    st = json.loads(r.stdout or "{}")
    check(r.returncode == 0 and st.get("models_skipped") == 3 and counts() == before,
          "models again: %s %s %s" % (r.stdout, r.stderr, counts()))
    # A damaged model beside a new good one: one line, exit 2, nothing stored.
    good = os.path.join(tmp, "good.vgm")
    with open(good, "w") as f:
        f.write('vigil-model 1\nevent 1 5 g.c:1 "g"\n')
    bad = os.path.join(tmp, "bad.vgm")
    with open(bad, "w") as f:
        f.write('vigil-model 1\nevent 1 5 g.c:1 "g"\ntransition 1 7 1 0\n')
    r = run([VIGIL, "store", good, bad, "--to", url])
    check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "bad.vgm:3:" in r.stderr,
          "damaged model: %d %r" % (r.returncode, r.stderr))
    check(counts() == before, "a damaged model stored something: %s" % counts())
    fifo = os.path.join(tmp, "fifo.vgm")
    os.mkfifo(fifo)
    r = run([VIGIL, "store", fifo, "--to", url], timeout=60)
    check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and counts() == before,
          "fifo model: %d %r" % (r.returncode, r.stderr))


def hand_times():
    a = [1000 + 37 * k for k in range(700)]
    b = [50 + (k * 7919) % 100000 for k in range(600)]
    hist = lambda ts: " ".join("%d:%d" % (x, sum(1 for t in ts if bucket(t) == x))
                               for x in sorted({bucket(t) for t in ts}))
    return sum(a), hist(a), sum(b), hist(b)


def images(trace):
    """The trace's process images as `vigil dump --stats --json` lists them."""
    r = run([VIGIL, "dump", "--stats", "--json", trace])
    return [x for x in map(json.loads, r.stdout.splitlines()) if "image" in x]


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
        check(len(pid) == 1 and [i for i in images(t1) if i["proc"] == "mailbox" and
                                 str(i["pid"]) == pid[0]], "vg_pid %s" % pid)
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
        # its path below the trace, in either layout (a directory, or shared/NAME)
        img = os.path.relpath([i["image"] for i in images(t2) if i["proc"] == "mailbox"][0], t2)
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

        # 5. Behaviour models beside the traces.
        models(pg, url, tmp, t1)
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
