"""vigil diff over two query results (docs/query.md "Comparing two runs"): two recordings
of the three-tier example at two loads; the same statements (over derived and primitive
relations) answered on each; `vigil diff --query` over the traces equals `vigil diff`
over the two saved answers, and both equal the differences computed here from the
answers themselves (and, over two recordings of the mailbox example, a key selection
reaches diff's build, the report the same): tuples counted differently, each key's count and share, each key's
means (numeric attributes and the intervals' durations), ranked largest first. A result
diffed with itself has no difference. Bad input: one line, exit 2.

Also two recordings of Debian's redis-server driven by redis-benchmark with two workloads
(NAME redis; skipped, exit 77, without redis).

Run: results_diff_test.py NAME (NAME: diff, redis or errors)."""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from vigil_testlib import VIGIL, check, main, redis_script, run, tmpdir  # noqa: E402

BIN = os.environ.get("VIGIL_BIN", "build/bin")

STATEMENTS = [
    ("range of N is Network retrieve (N.input, N.program, N.messages, N.response, N.bytes)",
     None),
    ("range of N is Network range of M is Message "
     "retrieve (N.input, M.recv_program, M.bytes) where M.network = N.id", None),
    ("range of N is Network retrieve (N.id, N.messages, N.threads)", "id"),
    ("range of T is OSThread retrieve (T.name)", None),
]


def record(d, name, threads, requests):
    trace = os.path.join(d, name)
    run([VIGIL, "record", "-q", "-o", trace, "--", os.path.join(BIN, "three_tier"), "run",
         "--threads", str(threads), "--requests", str(requests)], check_rc=0)
    return trace


def answer(trace, text, path):
    p = run([VIGIL, "query", trace, "--format", "json", "-e", text], check_rc=0)
    with open(path, "w") as f:
        f.write(p.stdout)
    return [json.loads(x) for x in p.stdout.splitlines()]


def diff(*args, rc=0):
    p = run([VIGIL, "diff", "--top", "0", "--format", "json", *args], check_rc=rc)
    return json.loads(p.stdout) if rc == 0 else p


def close(x, y):
    return x == y or (x is not None and y is not None and
                      abs(x - y) <= 1e-9 * max(abs(x), abs(y)))


def expected(rows_a, rows_b, by):
    """The report's relation, computed from the two answers."""
    rows = rows_a + rows_b
    attrs = list(rows[0]["values"])
    numeric = {a for a in attrs if all(isinstance(r["values"][a], (int, float)) or
                                       r["values"][a] is None for r in rows)}
    key = [a for a in attrs if (a in by.split(",") if by else a not in numeric)]
    measures = [a for a in attrs if a in numeric and a not in key] + ["(duration)"]
    dump = lambda d: json.dumps(d, sort_keys=True, separators=(",", ":"))  # noqa: E731
    tuples = [collections.Counter(dump(r["values"]) for r in side)
              for side in (rows_a, rows_b)]
    diffs = {t: (tuples[0][t], tuples[1][t]) for t in set(tuples[0]) | set(tuples[1])
             if tuples[0][t] != tuples[1][t]}
    groups, sums = collections.defaultdict(lambda: [0, 0]), {}
    for side, rs in enumerate((rows_a, rows_b)):
        for r in rs:
            k = dump({a: r["values"][a] for a in key})
            groups[k][side] += 1
            for m in measures:
                v = (r["to"] - r["from"]) if m == "(duration)" and "to" in r else \
                    r["values"].get(m) if m != "(duration)" else None
                if v is not None:
                    s = sums.setdefault((k, m), [[0, 0], [0, 0]])
                    s[side][0] += v
                    s[side][1] += 1
    means = {km: (s[0][0] / s[0][1], s[1][0] / s[1][1]) for km, s in sums.items()
             if s[0][1] and s[1][1]}
    return key, measures, diffs, dict(groups), means, (len(rows_a), len(rows_b))


def check_relation(got, want, what):
    key, measures, diffs, groups, means, counts = want
    check(got["key"] == key and got["measures"] == measures,
          f"{what}: key {got['key']} measures {got['measures']}, want {key} {measures}")
    check((got["baseline_tuples"], got["other_tuples"]) == counts, f"{what}: counts")
    dump = lambda d: json.dumps(d, sort_keys=True, separators=(",", ":"))  # noqa: E731
    g_t = {dump(t["values"]): (t["baseline"], t["other"]) for t in got["tuples"]}
    check(g_t == diffs and got["tuples_differing"] == len(diffs),
          f"{what}: tuples {len(g_t)} vs {len(diffs)}: {list(g_t.items())[:2]} "
          f"{list(diffs.items())[:2]}")
    g_g = {dump(g["key"]): [g["baseline"], g["other"]] for g in got["groups"]}
    check(g_g == {k: list(v) for k, v in groups.items()}, f"{what}: groups {g_g} vs {groups}")
    for g in got["groups"]:
        ca, cb = groups[dump(g["key"])]
        check(close(g["share_baseline"], ca / counts[0]) and
              close(g["share_other"], cb / counts[1]), f"{what}: shares of {g}")
    g_c = {(dump(c["key"]), c["attr"]): (c["baseline_mean"], c["other_mean"])
           for c in got["changes"]}
    check(set(g_c) == set(means) and all(close(g_c[k][0], means[k][0]) and
                                         close(g_c[k][1], means[k][1]) for k in means),
          f"{what}: changes {sorted(g_c.items())[:3]} vs {sorted(means.items())[:3]}")
    # ranked: largest first
    for name, score in (("tuples", lambda t: abs(t["other"] - t["baseline"])),
                        ("groups", lambda g: abs(g["change"])),
                        ("changes", lambda c: c["score"])):
        scores = [score(x) for x in got[name]]
        check(all(scores[i] >= scores[i + 1] - 1e-12 for i in range(len(scores) - 1)),
              f"{what}: {name} not ranked: {scores[:5]}")


def test_diff():
    d = tmpdir("results-diff")
    a, b = record(d, "light", 2, 4), record(d, "heavy", 3, 12)
    for i, (text, by) in enumerate(STATEMENTS):
        fa, fb = os.path.join(d, f"a{i}.json"), os.path.join(d, f"b{i}.json")
        rows_a, rows_b = answer(a, text, fa), answer(b, text, fb)
        check(rows_a and rows_b, f"{text}: an empty answer")
        extra = ["--by", by] if by else []
        files = diff(fa, fb, *extra)
        traces = diff("--query", text, a, b, *extra)
        check(files["relations"] == traces["relations"],
              f"{text}: --query over the traces differs from the saved answers")
        check(len(files["relations"]) == 1, f"{text}: relations {files['relations']}")
        check_relation(files["relations"][0], expected(rows_a, rows_b, by), text)
        check(files["same_tuples"] is False, f"{text}: the two loads answered alike")
        same = diff(fa, fa, *extra)
        rel = same["relations"][0]
        check(same["same_tuples"] and not rel["tuples"] and
              all(c["score"] == 0 for c in rel["changes"]) and
              all(g["change"] == 0 for g in rel["groups"]), f"{text}: itself: {rel}")
        top = run([VIGIL, "diff", "--top", "1", "--format", "json", fa, fb, *extra],
                  check_rc=0)
        rel = json.loads(top.stdout)["relations"][0]
        check(all(len(rel[k]) <= 1 for k in ("tuples", "groups", "changes")),
              f"{text}: --top 1: {rel}")
        text_out = run([VIGIL, "diff", fa, fb, *extra], check_rc=0).stdout
        check("tuples counted differently" in text_out and "groups" in text_out and
              "changes of the mean" in text_out, f"{text}: text report {text_out[:300]}")
    selections_reach_build(d)


def selections_reach_build(d):
    """The statements' selections reach the build of `vigil diff --query` (no cache): over
    two recordings of the mailbox example (its sensors' relations; vigil's own vg.* are
    never selected), a key selection on SendMessage builds only the tuples it selects
    (VIGIL_BUILD_STATS says so), and the report is the one built whole (VIGIL_SKIP=off)."""
    a, b = (os.path.join(d, f"mailbox{seed}") for seed in (1, 2))
    for seed, trace in ((1, a), (2, b)):
        run([VIGIL, "record", "-q", "-o", trace, "--", os.path.join(BIN, "mailbox"),
             "--seed", str(seed)], check_rc=0)
    vals = sorted(o["values"]["msg"] for o in
                  answer(a, "range of S is SendMessage retrieve (S.msg)", os.devnull))
    text = ("range of S is SendMessage retrieve (S.process, S.msg) "
            f"where S.msg >= {vals[len(vals) // 2]}")
    env = {"VIGIL_CACHE": "off", "VIGIL_BUILD_STATS": "1"}
    keyed = run([VIGIL, "diff", "--top", "0", "--format", "json", "--query", text, a, b],
                env=env, check_rc=0)
    whole = run([VIGIL, "diff", "--top", "0", "--format", "json", "--query", text, a, b],
                env=dict(env, VIGIL_SKIP="off"), check_rc=0)
    stats = [json.loads(x.split(": ", 1)[1]) for x in keyed.stderr.splitlines()
             if x.startswith("vigil build: ")]
    check(len(stats) == 2 and all(st["keyed"] == 1 for st in stats),
          f"{text}: diff --query did not build keyed: {keyed.stderr[-500:]}")
    check(json.loads(keyed.stdout) == json.loads(whole.stdout),
          f"{text}: the keyed build's report differs from the whole build's")


def test_redis():
    d = tmpdir("results-diff-redis")
    traces = []
    for name, requests, clients in (("light", 100, 2), ("heavy", 400, 4)):
        made = redis_script(requests, clients)
        if not made:
            print("skipped: redis-server and redis-tools not installed (scripts/install-deps.sh)")
            sys.exit(77)
        traces.append(os.path.join(d, name))
        run([VIGIL, "record", "-q", "-o", traces[-1], "--", "sh", "-c", made[0]], check_rc=0)
    for i, text in enumerate([
            "range of N is Network retrieve (N.program, N.input, N.messages, N.bytes)",
            "range of M is Message retrieve (M.send_program, M.recv_program, M.bytes)"]):
        fa, fb = os.path.join(d, f"a{i}.json"), os.path.join(d, f"b{i}.json")
        rows_a, rows_b = answer(traces[0], text, fa), answer(traces[1], text, fb)
        check(rows_a and rows_b, f"redis {text}: an empty answer")
        got = diff("--query", text, *traces)
        check(got["relations"] == diff(fa, fb)["relations"],
              f"redis {text}: --query over the traces differs from the saved answers")
        check_relation(got["relations"][0], expected(rows_a, rows_b, None), "redis " + text)
        check(not got["same_tuples"], f"redis {text}: the two workloads answered alike")


def one_line(p, needle, what, lines=1):
    check(p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == lines and
          needle in p.stderr, f"{what}: exit {p.returncode}, stderr {p.stderr!r}")


def test_errors():
    d = tmpdir("results-diff-bad")
    a = record(d, "a", 2, 2)
    fa, fb = os.path.join(d, "a.json"), os.path.join(d, "b.json")
    answer(a, STATEMENTS[0][0], fa)
    answer(a, "range of N is Network retrieve (N.id, N.host)", fb)
    p = diff(fa, fb, rc=2)
    one_line(p, "other attributes", "different attributes")
    bad = os.path.join(d, "bad.json")
    with open(fa) as f, open(bad, "w") as g:
        g.write(f.readline() + "{not json\n")
    one_line(diff(fa, bad, rc=2), f"{bad}:2: not a line of vigil query", "a bad line")
    one_line(diff("--by", "nosuch", fa, fa, rc=2), "--by nosuch", "--by an unknown attribute")
    model = os.path.join(d, "m.vgm")
    run([VIGIL, "model", "--from-trace", a, "-o", model], check_rc=0)
    one_line(diff(fa, model, rc=2), "compare like with like", "results and a model")
    one_line(diff(fa, os.path.join(d, "none.json"), rc=2), "No such file", "a missing file")
    one_line(diff("--query", "range of N is Nettwork retrieve (N.id)", a, a, rc=2),
             "no relation 'Nettwork'", "a query with a typo", lines=3)
    one_line(diff("--query", STATEMENTS[0][0], a, os.path.join(d, "none"), rc=2),
             "none", "a trace that is not there")
    one_line(diff("--by", "id", model, model, rc=2), "--by is for query results",
             "--by with models")


main({"diff": test_diff, "redis": test_redis, "errors": test_errors})
