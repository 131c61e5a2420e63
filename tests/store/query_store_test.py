"""vigil query / vigil explain on postgresql:// (docs/tquel-sql.md) against a real
PostgreSQL server (Debian's binaries) started here on a Unix socket in a temporary
directory. A mailbox recording is stored with `vigil store`; then, per construct of the
language compiled to SQL (where, when's overlap / precede / equal and their and / or /
not, valid at and valid from ... to, begin of, end of, overlap and extend as expressions,
aggregates (stdev and varts too: the same doubles to the last bit) and aggregates in valid
and when clauses, clocks (with --tick),
the constants, entities compared with strings and with entities, unsigned values,
retrieve unique, V.all, retrieve into ranged over again, in the same run and in a later
one), a hand-written retrieve is answered over the trace and over the store and the two
answers must be equal as sets, and non-empty; --show-sql shows the SQL shapes the
docs promise (plain comparisons of the time columns, && of int8range for two stored
intervals, EXISTS for a variable only where and when read), the recording has intervals that meet (the end of one the begin of another:
the overlap's open end is tested) and PostgreSQL can serve the compiled overlap with the
GiST index of vigil store --index; vigil explain prints PostgreSQL's plan and writes
nothing. Where btree_gist cannot be created (a database whose event trigger refuses
CREATE EXTENSION), --index says so in one line, leaves out only the keyed GiST indexes,
and the keyed overlap answers the same.

Refused before running, one line (SOURCE:LINE:COL and a caret), exit 2, nothing written:
a clock whose period overflows, a relation the store lacks, an aggregate inside an
aggregate. Bad input, one line, exit 2, nothing
written: a URL that cannot connect, a database without a store, a schema from an older
vigil (no catalog), a statement that fails in PostgreSQL after an earlier retrieve into.

usage: query_store_test.py BIN_DIR PG_BIN [QUERY_VIGIL]
QUERY_VIGIL: the vigil that runs query and explain (e.g. the sanitizers' build); BIN_DIR's
records and stores."""
import os
import sys
import tempfile

from store_testlib import (answers as answers_of, check, compare, finish, free_port, postgres,
                           run)

BIN, PG_BIN = sys.argv[1], sys.argv[2]
VIGIL = os.path.join(BIN, "vigil")
QVIGIL = sys.argv[3] if len(sys.argv) > 3 else VIGIL

RANGES = """range of W is Waiting
range of W2 is Waiting
range of R is RunningOn
range of S is SendMessage
range of S2 is SendMessage
range of P is Process
range of PS is ProcessState
range of PS2 is ProcessState
"""

# construct -> statements (answered both ways, compared as sets, each non-empty)
CASES = {
    "where": "retrieve (W.process, W.mailbox) where W.mailbox = \"M1\" or "
             "W.mailbox = \"M2\"",
    "where_arith": "retrieve (m = S.msg, k = S.msg * 2 - 1, d = S.msg / 3, f = S.msg / 2.5)"
                   " where S.msg > 10 and not (S.msg >= 150)",
    "uint_compare": "retrieve (S.msg) where S.msg < -1 or S.msg = 7 or S.payload != S.msg",
    "entity_eq": "retrieve (W.process, r = R.processor) where W.process = R.process",
    "entity_ne": "retrieve (a = W.process, b = W2.process) where W.mailbox = W2.mailbox and "
                 "W.process != W2.process",
    "when_overlap": "retrieve (W.process, R.processor) when W overlap R",
    "when_precede": "retrieve (a = W.process, b = W2.process) valid from begin of W to end "
                    "of W2 where W.mailbox = W2.mailbox when W precede W2 and not (begin of "
                    "W equal begin of W2)",
    "when_or": "retrieve (W.process, S.msg) when S overlap W or end of W equal S",
    "when_equal": "retrieve (S.msg, n = S2.msg) where S.msg < 20 when S equal S2 or "
                  "(S precede S2 and not (S2 precede S))",
    "valid_at": "retrieve (W.process) valid at begin of W where W.mailbox = \"M3\"",
    "valid_from_to": "retrieve (W.process, R.processor) valid from begin of W to end of R "
                     "where W.process = R.process when W precede R",
    # S read by neither the values nor the valid time: an EXISTS (a semi-join)
    "exists": "retrieve (W.process) valid at end of W where S.process = W.process and "
              "S.msg > 100 when S precede end of W",
    "overlap_expr": "retrieve (W.process, R.processor) valid at begin of (W overlap R)",
    "extend": "retrieve (W.process) valid from begin of (W extend R) to end of (W extend R)"
              " where W.process = R.process",
    "event_in_interval": "retrieve (S.msg, W.process) when S overlap W",
    "constants": "retrieve (S.msg) when S precede \"now\" and \"beginning\" precede S and "
                 "S precede \"forever\"",
    "entity_string": "retrieve (P.name, P.id) where P.name >= \"P3\" or P.name = \"\"",
    "unique": "retrieve unique (W.mailbox)",
    "unique_join": "retrieve unique (R.processor) when R overlap W",
    "all": "retrieve (W.all)",
    "agg_correlated": "retrieve (W.mailbox, n = count(W.process by W.mailbox))",
    "agg_ever": "retrieve (n = count(S.msg for ever), s = sum(S.msg for ever))",
    "agg_where": "retrieve (s = sum(S.msg where S.msg < 100), a = avg(S.payload))",
    "agg_by": "retrieve (m = max(S.msg by S.mailbox), x = min(S.payload for ever))",
    "agg_any": "retrieve (R.processor, busy = any(W.process by W.mailbox))",
    "agg_in_where": "retrieve (W.process) where count(W2.process by W2.mailbox) > 1",
    "agg_string": "retrieve (P.name, first = min(P.name), last = max(P.name for ever))",
    "agg_window": "retrieve (n = count(S.msg for each 1 ms), u = countU(S.mailbox by "
                  "S.process))",
    "agg_time": "retrieve (f = first(S.msg), l = last(S.msg for ever), r = rate(S.msg for "
                "ever), t = avgti(S.payload by S.mailbox for each 5 ms))",
    "agg_inner_when": "retrieve (W.process, n = count(S.msg where S.msg > 5 and S.process = "
                      "R.process when S overlap R))",
    "agg_valid": "retrieve (W.process, n = sumU(S.msg by S.mailbox for ever)) valid at begin of W "
                 "where W.mailbox = \"M1\"",
    "agg_stdev": "retrieve (d = stdev(S.msg by S.mailbox), e = stdev(S.payload * 0.5 for ever),"
                 " f = stdev(S.msg + 0.1 for each 3 ms))",
    "agg_varts": "retrieve (W.mailbox, v = varts(W.process by W.mailbox for ever), "
                 "u = varts(S.msg for each 20 ms))",
    "agg_in_when": "retrieve (W.process) when W overlap count(S.msg)",
    "agg_in_valid": "retrieve (W.process, S.mailbox) valid from begin of max(S.msg by S.mailbox "
                    "for ever) to end of W where S.mailbox = W.mailbox and S.msg < 30",
    "agg_in_valid_at": "retrieve (W.process) valid at begin of count(W2.process by W2.mailbox)"
                       " where W.mailbox = W2.mailbox",
    "agg_in_when_precede": "retrieve (W.process) where W.mailbox = \"M1\" when begin of "
                           "count(S.msg) precede W",
    # consecutive states of a process meet: [b, e) and [e, f) do not overlap
    "overlap_meeting": "retrieve (a = PS.state, b = PS2.state) where PS.process = PS2.process "
                       "when PS overlap PS2",
    "into": "retrieve into Busy (W.process, W.mailbox, n = 1)\n"
            "range of B is Busy\n"
            "retrieve (B.process, R.processor) when B overlap R where B.process = R.process",
}


def answers(source, text, extra=()):
    return answers_of(QVIGIL, source, text, extra)


def one_line_error(p, what, needle, printed=False):
    """printed: results of statements before the failing one may have been printed."""
    lines = p.stderr.strip().splitlines()
    ok = p.returncode == 2 and (printed or p.stdout == "") and len(lines) >= 1 and \
        needle in p.stderr
    # a TQuel error is one line with its source line and caret under it
    ok = ok and (len(lines) == 1 or (len(lines) == 3 and lines[2].strip() == "^"))
    check(ok, "%s: want exit 2 and one line with %r, got %d: %r" %
          (what, needle, p.returncode, p.stderr))


def tables(pg, schema="vigil"):
    return pg.psql("SELECT string_agg(table_name, ',' ORDER BY table_name) FROM "
                   "information_schema.tables WHERE table_schema = '%s'" % schema).stdout.strip()


def main():
    tmp = tempfile.mkdtemp(prefix="vigil-qstore-")
    os.chmod(tmp, 0o755)
    trace = os.path.join(tmp, "run1")
    r = run([VIGIL, "record", "-q", "-o", trace, "--", os.path.join(BIN, "mailbox"),
             "--processors", "2", "--processes", "6", "--mailboxes", "3", "--messages", "300",
             "--seed", "7"])
    if r.returncode:
        sys.exit("vigil record failed: " + r.stderr)
    with postgres(PG_BIN, BIN) as (pg, base):
        r = run([VIGIL, "store", trace, "--to", base, "-q"])
        check(r.returncode == 0, "vigil store: %s" % r.stderr)

        # 1. every construct: the same answer both ways, not empty
        for name, stmts in CASES.items():
            compare(name, QVIGIL, trace, base, RANGES + stmts, as_sets=True)
        print("constructs: %d compared" % len(CASES), file=sys.stderr)

        # 1a. clocks: Clock[n] ticks over the stored time line as over the trace's
        clock = RANGES + ("range of C is Clock[3]\nrange of C1 is Clock\n"
                          "retrieve (W.process) when C overlap W\n"
                          "retrieve (n = count(W.process for each 2 ms when C1 overlap W))")
        want, p1 = answers(trace, clock, ["--tick", "1ms"])
        got, p2 = answers(base, clock, ["--tick", "1ms"])
        check(p1.returncode == 0 and p2.returncode == 0 and len(want) == 2 and
              all(want.values()) and
              {k: set(v) for k, v in want.items()} == {k: set(v) for k, v in got.items()},
              "clocks: exits %d, %d; %s vs %s" % (p1.returncode, p2.returncode,
                                                  {k: len(v) for k, v in want.items()},
                                                  {k: len(v) for k, v in got.items()}))

        # 1b. vigil store --index: the B-trees, idempotent, and the same answers after
        for _ in range(2):
            r = run([VIGIL, "store", "--index", "--to", base])
            check(r.returncode == 0 and "indexes in schema vigil" in r.stderr,
                  "vigil store --index: %s" % r.stderr)
        ix = pg.psql("SELECT string_agg(indexdef, E'\\n') FROM pg_indexes WHERE schemaname = "
                     "'vigil' AND tablename = 'Waiting'").stdout
        for want in ["(valid_from, valid_to)", "(valid_to)", 'process COLLATE "C"',
                     "USING gist (int8range(valid_from, valid_to))",
                     "(process_id, process_gen, vg_load)"]:
            check(want in ix, "index on Waiting %s missing: %s" % (want, ix))
        # btree_gist: a GiST index on (number attribute, valid time) per interval
        # relation, which an overlap join with an equal key probes (forced: small tables)
        ix = pg.psql("SELECT string_agg(indexdef, E'\\n') FROM pg_indexes WHERE schemaname = "
                     "'vigil' AND tablename = 'Process'").stdout
        check('"vg_ix_Process_id_range" ON vigil."Process" USING gist' in ix and
              "int8range(valid_from, valid_to)" in ix, "no keyed GiST index on Process: %s" % ix)
        keyed = ("range of P3 is Process retrieve (a = P.name, b = P3.name) where P.id = P3.id "
                 "when P overlap P3")
        want, _ = answers(trace, RANGES + keyed)
        got, _ = answers(base, RANGES + keyed)
        check(want and {k: set(v) for k, v in want.items()} ==
              {k: set(v) for k, v in got.items()}, "keyed overlap: answers differ")
        p = run([QVIGIL, "query", base, "--show-sql", "--format", "json", "-e", RANGES + keyed])
        sql = p.stderr[p.stderr.index("SELECT DISTINCT"):].split("\nORDER BY")[0]
        # (the other GiST indexes of Process dropped in a transaction never committed:
        # on six rows the planner may as well probe one of them and filter by id)
        plan = pg.psql('BEGIN; DROP INDEX vigil."vg_ix_Process_gen_range", '
                       'vigil."vg_ix_Process_range"; SET enable_seqscan = off; SET '
                       "enable_hashjoin = off; SET enable_mergejoin = off; SET "
                       "enable_bitmapscan = off; EXPLAIN " + sql).stdout
        cond = [x for x in plan.splitlines() if "Index Cond" in x]
        check("vg_ix_Process_id_range" in plan and cond and "&&" in cond[0] and
              "bigint =" in cond[0],
              "the keyed overlap does not probe the keyed GiST index:\n%s\n%s" % (sql, plan))
        for name in ("when_overlap", "entity_eq", "unique"):
            want, _ = answers(trace, RANGES + CASES[name])
            got, _ = answers(base, RANGES + CASES[name])
            check({k: set(v) for k, v in want.items()} == {k: set(v) for k, v in got.items()},
                  "%s after --index: answers differ" % name)

        # 1c. without btree_gist: in a database whose event trigger refuses CREATE
        # EXTENSION, --index says so in one line, makes every other index (the plain GiST
        # of the valid times too) and no keyed one, and the keyed overlap answers the same
        no_ext = "postgresql://postgres@/nogist?" + base.split("?", 1)[1]

        def nogist_sql(sql):
            return run(pg.client("psql") + ["-X", "-q", "-At", "-c", sql, "nogist"])

        pg.psql("CREATE DATABASE nogist")
        r = nogist_sql("CREATE FUNCTION refuse() RETURNS event_trigger LANGUAGE plpgsql AS $$ "
                       "BEGIN RAISE EXCEPTION 'extensions refused here'; END $$; CREATE EVENT "
                       "TRIGGER no_extensions ON ddl_command_start WHEN TAG IN ('CREATE "
                       "EXTENSION') EXECUTE FUNCTION refuse()")
        check(r.returncode == 0, "the refusing event trigger: %s" % r.stderr)
        r = run([VIGIL, "store", trace, "--to", no_ext, "-q"])
        check(r.returncode == 0, "vigil store without btree_gist: %s" % r.stderr)
        r = run([VIGIL, "store", "--index", "--to", no_ext])
        said = [x for x in r.stderr.splitlines() if "GiST" in x]
        check(r.returncode == 0 and len(said) == 1 and "extensions refused here" in said[0] and
              "no GiST index on (key, valid time)" in said[0],
              "vigil store --index without btree_gist: exit %d, %s" % (r.returncode, r.stderr))
        ix = nogist_sql("SELECT string_agg(indexdef, E'\\n') FROM pg_indexes WHERE schemaname = "
                        "'vigil' AND tablename = 'Process'").stdout
        check('"vg_ix_Process_id_range"' not in ix and "USING gist (int8range(valid_from, "
              "valid_to))" in ix and "(valid_from, valid_to)" in ix,
              "indexes on Process without btree_gist: %s" % ix)
        got, _ = answers(no_ext, RANGES + keyed)
        want, _ = answers(trace, RANGES + keyed)
        check(want and {k: set(v) for k, v in want.items()} ==
              {k: set(v) for k, v in got.items()}, "keyed overlap without btree_gist: answers "
              "differ")
        print("without btree_gist: one line, no keyed index, the same answers", file=sys.stderr)

        # 2. retrieve into made a table and catalog rows: a later run ranges over it, and
        # running the statement again replaces it
        check("Busy" in tables(pg).split(","), "retrieve into: no table vigil.Busy")
        n1 = pg.psql('SELECT count(*) FROM vigil."Busy"').stdout.strip()
        got, p = answers(base, "range of B is Busy retrieve (B.process, B.n)")
        check(p.returncode == 0 and sum(len(v) for v in got.values()) > 0,
              "a later run over Busy: %s" % p.stderr)
        _, p = answers(base, RANGES + CASES["into"])
        check(p.returncode == 0, "retrieve into Busy again: %s" % p.stderr)
        check(pg.psql('SELECT count(*) FROM vigil."Busy"').stdout.strip() == n1,
              "retrieve into Busy again: not replaced")
        _, p = answers(base, RANGES + "retrieve into Waiting (W.process)")
        one_line_error(p, "retrieve into a stored relation", "already a relation")

        # 3. --show-sql: plain comparisons of the time columns; explain: PostgreSQL's plan
        p = run([QVIGIL, "query", base, "--show-sql", "--format", "json", "-e",
                 RANGES + CASES["when_overlap"]])
        check(p.returncode == 0 and "int8range(t0.valid_from, t0.valid_to) && "
              "int8range(t1.valid_from, t1.valid_to)" in p.stderr and
              "SELECT DISTINCT" in p.stderr, "--show-sql: %s" % p.stderr)
        px = run([QVIGIL, "query", base, "--show-sql", "--format", "json", "-e",
                  RANGES + CASES["exists"]])
        check(px.returncode == 0 and "EXISTS (SELECT 1 FROM" in px.stderr,
              "--show-sql of a variable only the where clause reads: %s" % px.stderr)
        # PostgreSQL can serve that overlap with the GiST index (forced: the tables are
        # small), and the recording has intervals that meet, where [) matters
        sql = p.stderr[p.stderr.index("SELECT DISTINCT"):].split("\nORDER BY")[0]
        plan = pg.psql("SET enable_seqscan = off; SET enable_hashjoin = off; SET "
                       "enable_mergejoin = off; SET enable_bitmapscan = off; EXPLAIN " +
                       sql).stdout
        check("_range" in plan and "&&" in plan, "the overlap does not use the GiST index:"
              "\n%s\n%s" % (sql, plan))
        meet = pg.psql('SELECT count(*) FROM vigil."ProcessState" a, vigil."ProcessState" b '
                       "WHERE a.valid_to = b.valid_from AND a.process_id = b.process_id"
                       ).stdout
        check(int(meet) > 0, "no ProcessState intervals meet: overlap_meeting does not test "
              "the open end")
        before = tables(pg)
        p = run([QVIGIL, "explain", base, "-e", RANGES + "retrieve into Gone (W.process)\n"
                 "range of G is Gone\n" + "retrieve (G.process) when G overlap R"])
        check(p.returncode == 0 and "PostgreSQL's plan" in p.stdout and "Scan" in p.stdout,
              "explain: %d %s %s" % (p.returncode, p.stdout[-500:], p.stderr))
        check(tables(pg) == before, "explain wrote tables: %s" % tables(pg))

        # 4. refused before running, nothing written
        before = tables(pg)
        for what, stmts, needle, printed in [
                ("aggregate in an aggregate", "retrieve into X1 (W.process)\n"
                 "retrieve (n = count(S.msg when S overlap count(W.process)))",
                 "an aggregate cannot be inside another aggregate", False),
                ("clock overflow", "range of C is Clock[9223372036854775807]\n"
                 "retrieve (W.process) when C overlap W", "the period overflows", False),
                ("unknown relation", "range of Z is NoSuchRelation\nretrieve (Z.x)",
                 "no relation 'NoSuchRelation' in the store", False),
                ("unknown attribute", "retrieve (W.nosuch)", "has no attribute 'nosuch'", False),
                ("SQL failure after into", "retrieve into X2 (W.process)\n"
                 "retrieve (x = S.msg * 9223372036854775807 * 9223372036854775807)",
                 "bigint out of range", True)]:
            _, p = answers(base, RANGES + stmts)
            one_line_error(p, what, needle, printed)
        check(tables(pg) == before, "refused statements wrote: %s" % tables(pg))

        # 5. bad input: one line, exit 2, nothing written
        schemas = pg.psql("SELECT string_agg(nspname, ',' ORDER BY nspname) FROM "
                          "pg_namespace").stdout.strip()
        _, p = answers("postgresql://postgres@127.0.0.1:%d/postgres" % free_port(),
                       RANGES + CASES["where"])
        one_line_error(p, "no server", "Connection refused")
        _, p = answers(base, RANGES + CASES["where"], ["--schema", "nosuch"])
        one_line_error(p, "no store in the schema", "no vigil store in schema nosuch")
        pg.psql("CREATE SCHEMA old; CREATE TABLE old.loads (id bigserial PRIMARY KEY); "
                "CREATE TABLE old.\"Waiting\" (vg_load bigint)")
        schemas = schemas.replace("information_schema", "information_schema,old")
        _, p = answers(base, RANGES + CASES["where"], ["--schema", "old"])
        one_line_error(p, "older schema", "written by an older vigil")
        after = pg.psql("SELECT string_agg(nspname, ',' ORDER BY nspname) FROM "
                        "pg_namespace").stdout.strip()
        check(after == schemas, "bad input created schemas: %s vs %s" % (after, schemas))
        check(tables(pg, "old") == "Waiting,loads", "older schema written: %s" %
              tables(pg, "old"))
    return finish(tmp, "query_store")


if __name__ == "__main__":
    sys.exit(main())
