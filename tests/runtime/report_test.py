"""The runtime keeps the rules of consistent partial reporting (docs/consistency.md):
each scenario of report_subject narrows or suspends reporting at chosen moments, and the
events reported must be exactly those the rules allow and demand. Run: report_test.py NAME."""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from vigil_testlib import Failure, check, dump_json, main, run, tmpdir  # noqa: E402

BIN = os.environ.get("VIGIL_BIN", "build/bin")
SUBJECT = os.path.join(BIN, "report_subject")


def token(e):
    """One reported event, shortly: name, then the fields that say which one it is."""
    name, f = e["name"], e["fields"]
    short = name.split(".", 1)[1] if name.startswith("t.") else name
    if name == "t.call.begin":
        return f"enter {f['fn']} d{f['vg_depth']}"
    if name == "t.call.end":
        return "leave"
    if name in ("t.new", "t.free"):
        return f"{short} {f['n']} g{f['obj']['gen']}"
    if name == "vg.report.synth":
        return "synth"
    if name == "vg.thread.name":
        return f"rename {f['name']}"
    return short


def reported(scenario, env=None):
    trace = tmpdir("report-" + scenario)
    shutil.rmtree(trace)
    run([SUBJECT, scenario], env={"VIGIL_OUT": trace, **(env or {})}, check_rc=0)
    events, _ = dump_json(trace)
    shutil.rmtree(trace, ignore_errors=True)
    skip = ("vg.process.begin", "vg.process.end", "vg.thread.begin", "vg.thread.end")
    streams = {}
    for e in events:
        if e["name"] not in skip:
            streams.setdefault((e["pid"], e["tid"]), []).append(token(e))
    return events, streams


def only(streams):
    check(len(streams) == 1, f"expected one stream: {streams}")
    return next(iter(streams.values()))


def expect(got, want, what):
    check(got == want, f"{what}:\n  got  {got}\n  want {want}")


def test_calls():
    _, s = reported("calls")
    expect(only(s), ["enter 1 d1", "synth", "enter 2 d2", "synth", "enter 3 d3", "enter 4 d4",
                     "leave", "leave", "leave", "leave"], "invocations (rule 4, rule 3)")


def test_calls_naive():
    """Without the tracking, the same schedule reports an invocation without its parents
    and leaves without enters: what vigil check exists to find."""
    _, s = reported("calls", {"VIGIL_CONSISTENCY": "off"})
    expect(only(s), ["enter 1 d1", "enter 4 d4", "leave", "leave"], "naive invocations")


def test_objects():
    _, s = reported("objects")
    expect(only(s), ["new 9 g0", "new 2 g1", "ref", "free 2 g1", "free 9 g0"],
           "objects (rules 1, 2, 3)")


def test_locks():
    _, s = reported("locks")
    expect(only(s), ["vg.entity.create", "acquire", "acquire", "release", "release", "acquire",
                     "release", "vg.entity.reclaim"], "locks (rule 5)")


def test_categories():
    _, s = reported("categories")
    expect(only(s), ["vg.entity.create", "acquire", "release", "vg.entity.reclaim"],
           "activity narrowed away, then a release forced")


def test_threads():
    events, s = reported("threads", {"VIGIL_REPORT_THREADS": "-quiet*"})
    check(len(s) == 1, f"expected the worker's stream only: {s}")
    expect(only(s), ["enter 10 d1", "leave"], "a thread filtered out by its new name")
    ends = [e for e in events if e["name"] == "vg.thread.end"]
    check(len(ends) == 2, f"both threads' ends are reported (their begins were): {ends}")


def test_threads_positive():
    """A positive glob leaves out what it does not name: the worker is reported only
    from its rename on, so its enclosing call is synthesized first."""
    _, s = reported("threads", {"VIGIL_REPORT_THREADS": "quiet*"})
    expect(only(s), ["synth", "enter 10 d1", "enter 11 d2", "leave", "leave"],
           "a thread filtered in by its new name")


def test_suspend_resume():
    _, s = reported("suspend_resume")
    expect(only(s), ["suspend", "resume"], "suspend/resume pairs")


def test_forked():
    events, s = reported("forked")
    pids = sorted({e["pid"] for e in events})
    check(len(pids) == 2, f"parent and child: {pids}")
    child = s[next(k for k in s if k[0] == pids[1])]
    parent = s[next(k for k in s if k[0] == pids[0])]
    expect(parent, ["enter 20 d1", "enter 21 d2", "leave", "leave"], "the parent")
    expect(child, ["synth", "enter 20 d1", "synth", "enter 21 d2", "enter 22 d3", "leave",
                   "leave", "leave"], "the child synthesizes what its trace lacks")


def test_synth_times():
    """A synthesized enter is valid from the time of the real one, not from when it was
    written: the relations take `at` of its vg.report.synth."""
    trace = tmpdir("report-times")
    shutil.rmtree(trace)
    run([SUBJECT, "calls"], env={"VIGIL_OUT": trace}, check_rc=0)
    q = run([os.path.join(BIN, "vigil"), "query", trace, "--format", "csv", "-e",
             "range of c is t.call retrieve (c.fn)"], check_rc=0).stdout
    events, _ = dump_json(trace)
    shutil.rmtree(trace, ignore_errors=True)
    froms = {int(r.split(",")[0]): int(r.split(",")[1]) for r in q.strip().splitlines()[1:]}
    written = {e["fields"]["fn"]: e["ts"] for e in events if e["name"] == "t.call.begin"}
    check(sorted(froms) == [1, 2, 3, 4], f"the four reported calls: {q}")
    for fn in (2, 3):
        check(froms[fn] < written[fn], f"call {fn}: valid from {froms[fn]}, written {written[fn]}")
    for fn in (1, 4):
        check(froms[fn] == written[fn], f"call {fn}: valid from {froms[fn]}, written {written[fn]}")
    check(froms[1] < froms[2] < froms[3] < froms[4], f"in call order: {froms}")


def test_shell_exec():
    """bash execs with its own copy of the environment (and its own getenv): the exec'd
    image must still learn that it continues the process, or the trace would hold two
    creations of one process (rule 1)."""
    trace = tmpdir("report-shell")
    shutil.rmtree(trace)
    vigil = os.path.join(BIN, "vigil")
    run([vigil, "record", "-o", trace, "--", "bash", "-c", "x=$(readlink -f /); echo $x"],
        check_rc=0)
    events, _ = dump_json(trace)
    p = run([vigil, "check", trace])
    shutil.rmtree(trace, ignore_errors=True)
    begins = [e["proc"] for e in events if e["name"] == "vg.process.begin"]
    check("readlink" not in begins, f"readlink began a process: {begins}")
    check(p.returncode == 0, f"vigil check: {p.stdout}{p.stderr}")


TESTS = {n[5:]: f for n, f in globals().items() if n.startswith("test_")}

if __name__ == "__main__":
    main(TESTS)  # vigil_testlib's: removes the test's folders when it passes
