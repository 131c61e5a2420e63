"""Log capture end to end (docs/logcapture.md): real subject programs, the raw model files
(`logmodel-<image>-<n>.vgm`, docs/model.md) they write, checked exactly.

  logcap_test.py TEST     (tests are listed at the bottom)
"""
import glob
import json
import os
import re
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from vigil_testlib import BIN, VIGIL, Failure, check, main, run, tmpdir  # noqa: E402

SRC = os.environ.get("VIGIL_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
API = os.path.join(BIN, "logcap_api_subject")
SYSLOG = os.path.join(BIN, "logcap_syslog_subject")
FORTIFY = os.path.join(BIN, "logcap_syslog_fortify")
API_SRC = os.path.join(SRC, "tests", "logcap", "api_subject.c")
SYSLOG_SRC = os.path.join(SRC, "tests", "logcap", "syslog_subject.c")
SUB = 64  # sketch: buckets per power of two (src/common/sketch_index.h)


def bucket_low(b):
    return b if b < SUB else (SUB + b % SUB) << (b // SUB - 1)


def bucket_high(b):  # the largest value in bucket b
    return b if b < SUB else bucket_low(b) + (1 << (b // SUB - 1)) - 1


def parse(path):
    """One raw model file: {events: {id: (count, site, fmt)}, names, trans: {(a, b): (count,
    sum, {bucket: n})}, source}."""
    m = {"events": {}, "names": {}, "trans": {}, "source": []}
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    check(lines[0] == "vigil-model 1", f"{path}: first line {lines[0]!r}")
    check(lines[-1] == "", f"{path}: does not end with a newline")
    for no, line in enumerate(lines[1:-1], 2):
        where = f"{path}:{no}"
        if line.startswith("#"):
            continue
        kind, _, rest = line.partition(" ")
        if kind == "source":
            m["source"].append(rest)
        elif kind == "event":
            e, count, site, fmt = rest.split(" ", 3)
            check(int(e) not in m["events"], f"{where}: event {e} twice")
            m["events"][int(e)] = (int(count), site, json.loads(fmt))
        elif kind == "name":
            e, tag = rest.split(" ", 1)
            m["names"][int(e)] = json.loads(tag)
        elif kind == "transition":
            f = rest.split(" ")
            a, b, count, total = (int(x) for x in f[:4])
            buckets = {}
            last = -1
            for item in f[4:]:
                k, n = item.split(":")
                check(int(k) > last, f"{where}: buckets not ascending")
                last = int(k)
                buckets[int(k)] = int(n)
            check(sum(buckets.values()) <= count, f"{where}: more times than transitions")
            m["trans"][(a, b)] = (count, total, buckets)
        else:
            raise Failure(f"{where}: unknown record {kind!r}")
    for (a, b) in m["trans"]:
        check(a in m["events"] and b in m["events"], f"{path}: transition {a}->{b} names an "
              "event the file does not declare")
    return m


def models(root, every_write=False):
    """The model files under root: each write holds everything its process image counted
    so far, so by default only the last write of each image."""
    files = glob.glob(os.path.join(root, "**", "logmodel-*.vgm"), recursive=True)
    def key(p):
        image, n = image_of(p)
        return (os.path.dirname(p), image), n
    files.sort(key=key)
    if every_write:
        return files
    last = {}
    for p in files:
        last[key(p)[0]] = p
    return sorted(last.values())


def image_of(path):
    """logmodel-<image>-<n>.vgm -> (image, n); the image is its directory's name."""
    image, n = os.path.basename(path)[len("logmodel-"):-len(".vgm")].rsplit("-", 1)
    return image, int(n)


def merged(paths):
    """Sums files by (site, fmt): {key: count}, {(key_a, key_b): [count, sum, buckets]}."""
    events, trans, names = {}, {}, {}
    for p in paths:
        m = parse(p)
        key = {e: (site, fmt) for e, (c, site, fmt) in m["events"].items()}
        for e, (c, site, fmt) in m["events"].items():
            events[key[e]] = events.get(key[e], 0) + c
        for e, tag in m["names"].items():
            names[key[e]] = tag
        for (a, b), (c, s, bk) in m["trans"].items():
            t = trans.setdefault((key[a], key[b]), [0, 0, {}])
            t[0] += c
            t[1] += s
            for k, n in bk.items():
                t[2][k] = t[2].get(k, 0) + n
    return events, trans, names


def by_fmt(events, fmt):
    found = [k for k in events if k[1] == fmt]
    check(len(found) == 1, f"event {fmt!r}: found {len(found)} times in {sorted(events)}")
    return found[0]


def line_of(src, text):
    with open(src) as f:
        for no, line in enumerate(f, 1):
            if text in line:
                return no
    raise Failure(f"{text!r} is not in {src}")


def tmp(name):
    return tmpdir(f"logcap-{name}")


def api_env(out, **extra):
    env = {"VIGIL_OUT": out, "VIGIL_LOG_TIMING": "1"}
    env.update(extra)
    return env


# ---- the C API -------------------------------------------------------------------------

def test_api_sequence():
    """Exact counts and transitions over 2 threads, a tag, the adapter, a model written on
    demand half-way, sleeps in the right buckets."""
    n = 1000
    out = tmp("seq")
    run([API, "seq", str(n)], env=api_env(out), check_rc=0)
    files = models(out, every_write=True)
    check(len(files) == 2, f"expected 2 model files (on demand, exit), found {files}")
    check([image_of(p)[1] for p in files] == [0, 1],
          f"files are not numbered 0, 1: {files}")
    first = parse(files[0])
    a0 = [c for c, site, fmt in first["events"].values() if fmt == "main a %d"]
    check(a0 == [n // 2 + 1], f"on-demand file: 'main a' counted {a0}, expected {n // 2 + 1}")
    check(models(out) == files[1:], "the last write is not the one read")
    events, trans, names = merged(files[1:])  # the last write holds everything
    A, B = by_fmt(events, "main a %d"), by_fmt(events, "main b %d")
    C, D = by_fmt(events, "worker c %d"), by_fmt(events, "worker d %d")
    X, W = by_fmt(events, "adapter %d"), by_fmt(events, "visible warning %d")
    for key, src_text in ((A, '"main a %d"'), (B, '"main b %d"'), (C, '"worker c %d"'),
                          (W, '"visible warning %d"')):
        want = f"{API_SRC}:{line_of(API_SRC, src_text)}"
        check(os.path.realpath(key[0].rsplit(":", 1)[0]) == os.path.realpath(want.rsplit(":", 1)[0])
              and key[0].rsplit(":", 1)[1] == want.rsplit(":", 1)[1],
              f"site of {key[1]!r} is {key[0]}, expected {want}")
    check(X[0].endswith(":999"), f"adapter site {X[0]}")
    expect_ev = {A: n, B: n, C: n, D: n, X: 3, W: 1}
    check(events == expect_ev, f"event counts {events} != {expect_ev}")
    expect_tr = {(A, B): n, (B, A): n - 1, (B, X): 1, (X, X): 2, (X, W): 1, (C, D): n,
                 (D, C): n - 1}
    got_tr = {k: v[0] for k, v in trans.items()}
    check(got_tr == expect_tr, f"transition counts {got_tr} != {expect_tr}")
    check(names == {C: "worker.step"}, f"names {names}")
    # VIGIL_LOG_TIMING=1: every transition timed; the first 5 C -> D waited >= 2 ms.
    for k, (c, s, bk) in trans.items():
        check(sum(bk.values()) == c, f"{k}: {sum(bk.values())} times for {c} transitions")
    c, s, bk = trans[(C, D)]
    slow = sum(v for b, v in bk.items() if bucket_high(b) >= 2_000_000)
    check(slow >= 5, f"C -> D: {slow} times of 2 ms or more, expected at least 5: {bk}")
    check(s >= 5 * 2_000_000, f"C -> D: sum {s} ns < 10 ms")


def test_api_pass():
    """VIGIL_LOG_PASS=info: debug messages are modelled but not written; info and warning
    are written; everything is counted."""
    n = 50
    out = tmp("pass")
    p = run([API, "seq", str(n)], env=api_env(out, VIGIL_LOG_PASS="info"), check_rc=0)
    err = p.stderr
    check(err.count(": info: main b ") == n, f"expected {n} 'main b' lines on stderr:\n{err[:2000]}")
    check("warning: visible warning 7" in err, "the warning is not on stderr")
    for hidden in ("main a", "worker c", "worker d", "adapter"):
        check(hidden not in err, f"debug message {hidden!r} was written:\n{err[:2000]}")
    events, _, _ = merged(models(out))
    check(events[by_fmt(events, "main a %d")] == n, "debug events were not all counted")
    # Default while recording: warnings and worse are written, the rest only modelled.
    out2 = tmp("pass-default")
    p = run([API, "seq", str(n)], env={"VIGIL_OUT": out2}, check_rc=0)
    check("warning: visible warning 7" in p.stderr and ": info: main b " not in p.stderr
          and "debug: main a" not in p.stderr,
          f"without VIGIL_LOG_PASS, not only warnings were written:\n{p.stderr[:1500]}")
    # VIGIL_LOG_PASS=all: everything is written.
    p = run([API, "seq", str(n)], env={"VIGIL_OUT": tmp("pass-all"), "VIGIL_LOG_PASS": "all"},
            check_rc=0)
    check(p.stderr.count(": debug: main a ") == n and "debug: worker d" in p.stderr,
          "with VIGIL_LOG_PASS=all the debug messages are not all written")
    p = run([API, "seq", str(n)], env=api_env(tmp("pass-none"), VIGIL_LOG_PASS="none"),
            check_rc=0)
    check(p.stderr == "", f"VIGIL_LOG_PASS=none wrote: {p.stderr[:500]}")
    p = run([API, "seq", "10"], env=api_env(tmp("pass-bad"), VIGIL_LOG_PASS="loud"),
            check_rc=0)
    check("VIGIL_LOG_PASS=loud" in p.stderr, "a bad VIGIL_LOG_PASS is not reported")


def test_api_off():
    """VIGIL_LOG=off, or not recording: no model file; messages still follow the threshold."""
    out = tmp("off")
    p = run([API, "seq", "20"], env=api_env(out, VIGIL_LOG="off", VIGIL_LOG_PASS="info"),
            check_rc=0)
    check(models(out) == [], f"VIGIL_LOG=off wrote {models(out)}")
    check(os.listdir(out), "VIGIL_LOG=off stopped the trace itself")
    check("main b 19" in p.stderr and "main a" not in p.stderr, "threshold not applied")
    env = dict(os.environ)
    env.pop("VIGIL_OUT", None)
    env["VIGIL_LOG_PASS"] = "info"
    q = subprocess.run([API, "seq", "20"], env=env, capture_output=True, text=True, timeout=60)
    check(q.returncode == 0 and "main b 19" in q.stderr, f"not recording: {q.returncode} {q.stderr[:300]}")


def test_api_kill():
    """SIGKILL loses what was not written yet, and only that: the on-demand file holds
    exactly the calls before it, and no half file is left."""
    n = 300
    out = tmp("kill")
    env = dict(os.environ, **api_env(out))
    p = subprocess.Popen([API, "kill", str(n)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        check(p.stdout.readline().strip() == "ready", "the subject did not get ready")
        p.send_signal(signal.SIGKILL)
    finally:
        p.wait(timeout=60)
    files = models(out)
    check(len(files) == 1 and files[0].endswith("-0.vgm"), f"expected one file, found {files}")
    leftovers = glob.glob(os.path.join(out, "**", ".logmodel*"), recursive=True)
    check(not leftovers, f"temporary files left: {leftovers}")
    events, trans, _ = merged(files)
    A, B = by_fmt(events, "main a %d"), by_fmt(events, "main b %d")
    check(events == {A: n, B: n}, f"events {events}")
    check({k: v[0] for k, v in trans.items()} == {(A, B): n, (B, A): n - 1}, f"transitions {trans}")


def test_api_fork():
    """A forked child writes its own file, in its own image directory, with its calls only."""
    n = 40
    out = tmp("fork")
    p = run([API, "fork", str(n)], env=api_env(out), check_rc=0)
    dirs = sorted(d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)))
    check(len(dirs) == 2, f"expected 2 image directories, found {dirs}")
    files = models(out)
    check(len(files) == 2 and all(os.path.dirname(f) == out for f in files),
          f"expected 2 model files in the trace's root, found {files}")
    per = {}
    for f in files:
        image = image_of(f)[0]
        check(image in dirs, f"{f}: no image directory {image}")
        pid = int(image.rsplit("-", 2)[1])
        per[pid] = merged([f])
    counts = sorted((sorted((k[1], c) for k, c in ev.items())) for ev, _, _ in per.values())
    # The parent's two sites: the loop's (n calls) and the one after the child (1).
    check(counts == sorted([[("main a %d", 1), ("main a %d", n)], [("child e %d", n)]]),
          f"parent and child counts: {counts}")
    del p


# ---- unmodified programs under `vigil record` -------------------------------------------

def record(out, prog, *args, env=None):
    full = {"VIGIL_LOG_TIMING": "1"}
    full.update(env or {})
    return run([VIGIL, "record", "-o", out, "--", prog, *args], env=full, check_rc=0)


def addr2line_lines(module, off):
    """Source lines of the call before return address `off` (inlined frames included)."""
    p = run(["addr2line", "-i", "-e", module, hex(off - 1)], check_rc=0)
    return [re.sub(r" \(discriminator \d+\)$", "", ln.strip()) for ln in p.stdout.splitlines()]


def check_syslog_model(prog, n, out):
    files = models(out)
    check(len(files) == 1, f"expected one model file, found {files}")
    events, trans, _ = merged(files)
    fmts = {k[1]: c for k, c in events.items()}
    expect = {"masked debug %d": n, "info %d": n, "warn via vsyslog %d": n,
              "stderr line %d\n": n, "<fputc>": 1, "dprintf %d\n": 1, "<perror>": 1,
              "before sleep %d": 5, "after sleep %d": 5}
    for fmt, c in expect.items():
        check(fmts.get(fmt) == c, f"{prog}: {fmt!r} counted {fmts.get(fmt)}, expected {c}")
    # fputs and fwrite texts are not formats: each line's template is the event.
    for text in ("fputs line", "fwrite line"):
        check(fmts.get(text) == 1, f"{prog}: {text!r} counted {fmts.get(text)}: {fmts}")
    check(not any("stdout" in f for f in fmts), f"{prog}: a stdout write was captured")
    real = os.path.realpath(prog)
    for key in events:
        module, _, off = key[0].rpartition("+0x")
        check(module == real, f"site {key[0]} is not in {real}")
        if key[1] in ("masked debug %d", "info %d", "stderr line %d\n", "before sleep %d",
                      "dprintf %d\n"):
            want = f"syslog_subject.c:{line_of(SYSLOG_SRC, json.dumps(key[1])[1:-1].replace(chr(92) * 2, chr(92)))}"
            lines = addr2line_lines(module, int(off, 16))
            check(any(ln.endswith(want) for ln in lines), f"{key}: addr2line says {lines}, expected {want}")
        if key[1] == "warn via vsyslog %d":
            want = f"syslog_subject.c:{line_of(SYSLOG_SRC, 'vsyslog(pri, fmt, ap)')}"
            lines = addr2line_lines(module, int(off, 16))
            check(any(ln.endswith(want) for ln in lines), f"vsyslog site: {lines}, expected {want}")
    M, I, W, E = (by_fmt(events, f) for f in ("masked debug %d", "info %d",
                                              "warn via vsyslog %d", "stderr line %d\n"))
    got = {k: v[0] for k, v in trans.items()}
    for k, c in {(M, I): n, (I, W): n, (W, E): n, (E, M): n - 1}.items():
        check(got.get(k) == c, f"{prog}: transition {k} counted {got.get(k)}, expected {c}")
    S0, S1 = by_fmt(events, "before sleep %d"), by_fmt(events, "after sleep %d")
    c, s, bk = trans[(S0, S1)]
    check(c == 5 and sum(bk.values()) == 5, f"sleep transition {c} {bk}")
    check(all(bucket_high(b) >= 3_000_000 for b in bk), f"3 ms sleeps in buckets {bk}")
    return events


def syslog_case(prog):
    n = 200
    out = tmp("sys")
    p = record(out, prog, str(n), env={"VIGIL_LOG_PASS": "notice"})
    check_syslog_model(prog, n, out)
    return p


def test_syslog_plain():
    nm = run(["nm", "-u", SYSLOG], check_rc=0).stdout
    check(re.search(r"\bsyslog\b", nm) and "__syslog_chk" not in nm,
          "the plain subject does not call syslog itself")
    syslog_case(SYSLOG)


def test_syslog_fortify():
    nm = run(["nm", "-u", FORTIFY], check_rc=0).stdout
    for f in ("__syslog_chk", "__vsyslog_chk", "__fprintf_chk", "__dprintf_chk"):
        check(f in nm, f"the fortified subject does not call {f}")
    syslog_case(FORTIFY)


def test_syslog_pass():
    """What passes reaches the real syslog (LOG_PERROR copies it to stderr) and stderr;
    what does not is modelled only."""
    n = 200  # as in syslog_case
    for prog in (SYSLOG, FORTIFY):
        p = syslog_case(prog)
        err = p.stderr
        check(err.count("warn via vsyslog") == n, f"warnings passed: {err.count('warn via vsyslog')}")
        check(err.count("before sleep") == 5, "notice messages were not passed")
        check("info " not in err and "masked debug" not in err,
              f"messages below the threshold reached syslog:\n{err[:1500]}")
        check(err.count("stderr line") == n and "perror here: No such file" in err,
              "stderr writes were not passed")
        # By default warnings pass, info does not; stderr text without a level word
        # passes. VIGIL_LOG_PASS=all passes everything; none keeps even stderr writes.
        q = record(tmp("default"), prog, str(n))
        check(q.stderr.count("warn via vsyslog") == n and "logcap-subject: info " not in q.stderr
              and q.stderr.count("stderr line") == n,
              f"default threshold: not warnings and unlevelled stderr only:\n{q.stderr[:1500]}")
        out = tmp("all")
        q = record(out, prog, str(n), env={"VIGIL_LOG_PASS": "all"})
        check(q.stderr.count("logcap-subject: info ") == n, "info not passed with all")
        check("masked debug" not in q.stderr, "the program's own mask was bypassed")
        out = tmp("none")
        q = record(out, prog, str(n), env={"VIGIL_LOG_PASS": "none"})
        for text in ("warn via", "stderr line", "perror here", "dprintf 5"):
            check(text not in q.stderr, f"VIGIL_LOG_PASS=none let {text!r} through")
        events, _, _ = merged(models(out))
        check(events[by_fmt(events, "stderr line %d\n")] == n, "suppressed writes not counted")
        # Not capturing: the program's output is untouched.
        q = record(tmp("off"), prog, str(n), env={"VIGIL_LOG": "off", "VIGIL_LOG_PASS": "none"})
        check(q.stderr.count("stderr line") == n and q.stderr.count("logcap-subject: info") == n,
              "VIGIL_LOG=off changed what the program writes")


def test_syslog_fork():
    n = 25
    out = tmp("sysfork")
    record(out, SYSLOG, str(n), "fork")
    files = models(out)
    check(len(files) == 2, f"expected 2 model files, found {files}")
    per = [merged([f])[0] for f in files]
    child = [ev for ev in per if any(k[1] == "child %d" for k in ev)]
    check(len(child) == 1 and {k[1]: c for k, c in child[0].items()} == {"child %d": n},
          f"child file: {child}")
    parent = [ev for ev in per if ev is not child[0]][0]
    check(not any(k[1] == "child %d" for k in parent), "the parent counted the child's calls")


# ---- templates: sites that do not identify their statements ----------------------------

TMPL = os.path.join(BIN, "logcap_tmpl_subject")
TMPL_LINKED = os.path.join(BIN, "logcap_tmpl_linked")  # linked with libvigil (sanitizers)


def record_tmpl(out, linked, *args, env=None, **kw):
    """The template subject under `vigil record`, or linked with libvigil and recording
    by VIGIL_OUT alone (how the sanitizer build runs it: no preload)."""
    full = {"VIGIL_LOG_TIMING": "1"}
    full.update(env or {})
    if linked:
        full["VIGIL_OUT"] = out
        return run([TMPL_LINKED, *args], env=full, check_rc=0, **kw)
    return run([VIGIL, "record", "-o", out, "--", TMPL, *args], env=full, check_rc=0, **kw)


def test_templates_wrap(linked=False):
    """A syslog("%s") wrapper, write(2) and writev(2) to fd 2: each message's template is
    an event, counted exactly; the default threshold writes only warnings and text with
    no level word."""
    n = 200
    out = tmp("tmpl")
    p = record_tmpl(out, linked, "wrap", str(n))
    events, trans, _ = merged(models(out))
    fmts = {}
    for k, c in events.items():
        fmts[k[1]] = fmts.get(k[1], 0) + c
    prefix = "<n> <n> UTC [<n>] "
    expect = {
        "checkpoint complete: wrote <n> buffers (<n>%); sync=<n> s": n,
        'connection from <n> port <n> user "<s>"': n,
        "WARNING: file <path> is <hex> bytes": n,
        prefix + "LOG:  statement took <n> ms": n,
        prefix + "DEBUG:  cache miss <n>": n,
        prefix + "WARNING:  disk <n>% full": n,
        "vector part <n> done": n,
    }
    check(fmts == expect, f"templates and counts:\n{json.dumps(fmts, indent=1)}")
    by = {k[1]: k for k in events}
    # all wrapped messages share the wrapper's site; the fd 2 lines share errline's
    sites = {by[t][0] for t in list(expect)[:3]}
    check(len(sites) == 1, f"the wrapper's messages have several sites: {sites}")
    ids = {fmt: by_fmt(events, fmt) for fmt in expect}
    order = list(expect)
    got = {k: v[0] for k, v in trans.items()}
    for a, b in zip(order, order[1:] + order[:1]):
        c = got.get((ids[a], ids[b]))
        want = n if b != order[0] else n - 1
        check(c == want, f"transition {a!r} -> {b!r} counted {c}, expected {want}")
    err = p.stderr
    for text, c in (("WARNING: file /var/lib/x/", n), ("WARNING:  disk", n), ("vector part", n),
                    ("checkpoint complete", 0), ("connection from", 0), ("statement took", 0),
                    ("cache miss", 0)):
        check(err.count(text) == c, f"{text!r} written {err.count(text)} times, expected {c}:"
              f"\n{err[:1500]}")
    # VIGIL_LOG_PASS=all: everything written, the same templates counted
    out = tmp("tmpl-all")
    q = record_tmpl(out, linked, "wrap", str(n), env={"VIGIL_LOG_PASS": "all"})
    for text in ("checkpoint complete", "connection from", "statement took", "cache miss"):
        check(q.stderr.count(text) == n, f"VIGIL_LOG_PASS=all: {text!r} not written {n} times")
    ev2, _, _ = merged(models(out))
    check(sorted(k[1] for k in ev2) == sorted(expect), "another run made other templates")
    # Templates are tagged like other events: by a glob over the template.
    mfile = os.path.join(out, "m.vgm")
    m = run([VIGIL, "model", out, "-o", mfile, "--name", "fmt:checkpoint complete:*=ckpt.done",
             "--name", "fmt:*WARNING:  disk*=disk.full"], check_rc=0)
    with open(mfile, encoding="utf-8") as f:
        text = f.read()
    check(text.count('"ckpt.done"') == 1 and text.count('"disk.full"') == 1,
          f"template tags not in the model: {m.stderr}\n{text[:1500]}")


def test_templates_flood(linked=False):
    """A million distinct messages through one site, a 1 MB line, binary and non-UTF-8
    bytes on fd 2: no crash, memory bounded, templates past the cap counted in one
    overflow event that `vigil model` reports."""
    n = 1_000_000
    cap = 1000
    out = tmp("flood")
    p = record_tmpl(out, linked, "flood", str(n), errors="replace", timeout=600)
    rss = int(p.stdout.split()[1])
    check(rss < 300 * 1024, f"peak resident size {rss} kB")
    events, _, _ = merged(models(out))
    distinct = {k: c for k, c in events.items() if k[1].startswith("distinct ")}
    over = {k: c for k, c in events.items() if k[1].startswith("<overflow: templates")}
    check(len(distinct) == cap and all(c == 1 for c in distinct.values()),
          f"{len(distinct)} distinct templates kept, expected {cap}")
    check(list(over.values()) == [n - cap], f"overflow events: {over}")
    site = next(iter(distinct))[0]
    check(next(iter(over))[0] == site, "the overflow event is not the wrapper's site")
    longl = [k for k in events if k[1].startswith("long line long line")]
    check(len(longl) == 1 and longl[0][1].endswith("...") and len(longl[0][1]) < 300,
          f"the 1 MB line: {longl}")
    check(any(k[1] == "bad ?? utf8 ?( here" for k in events),
          f"the non-UTF-8 line: {[k[1] for k in events if k[1].startswith('bad')]}")
    m = run([VIGIL, "model", out, "-o", os.path.join(out, "m.vgm")], check_rc=0)
    check(f"{n - cap} messages of 1 site past the template cap" in m.stderr,
          f"vigil model does not report the overflow: {m.stderr}")


def test_log_files(linked=False):
    """VIGIL_LOG_FILES: the lines a program writes to a log file whose path matches are
    captured and, below the threshold, not written; a file that does not match is left
    alone; a rotation (rename, new file on the same descriptor) is followed."""
    n = 100
    out = tmp("files")
    logs = tmp("files-logs")
    log, other = os.path.join(logs, "app-1.log"), os.path.join(logs, "other.txt")
    record_tmpl(out, linked, "file", log, other, str(n),
                env={"VIGIL_LOG_FILES": "/nonexistent/*:*/app-*.log"})
    events, _, _ = merged(models(out))
    fmts = {k[1]: c for k, c in events.items()}
    prefix = "<n> <n> UTC [<n>] "
    expect = {prefix + "LOG:  request <n> done": n, prefix + "DEBUG:  lookup <n>": n,
              prefix + "WARNING:  slow <n> ms": n}
    check(fmts == expect, f"templates of the log file: {fmts}")
    with open(log) as f:
        after = f.read().splitlines()
    with open(log + ".1") as f:
        before = f.read().splitlines()
    with open(other) as f:
        rest = f.read().splitlines()
    check(len(before) == n // 2 and len(after) == n - n // 2 and
          all("WARNING:" in ln for ln in before + after),
          f"the log file holds {len(before)} + {len(after)} lines, expected only the "
          f"{n} warnings: {(before + after)[:4]}")
    check(len(rest) == 3 * n, f"the file not named was changed: {len(rest)} lines")


FILE_PREFIX = "<n> <n> UTC [<n>] "
FILE_TEMPLATES = [FILE_PREFIX + "LOG:  request <n> done", FILE_PREFIX + "DEBUG:  lookup <n>",
                  FILE_PREFIX + "WARNING:  slow <n> ms"]


def only_warnings(lines, want, what):
    check(len(lines) == want and all("WARNING:  slow" in ln for ln in lines),
          f"{what} holds {len(lines)} lines, expected only {want} warnings: {lines[:4]}")


def test_log_fifo(linked=False):
    """A log 'file' that is a FIFO a reader process drains: its lines are captured and only
    the warnings reach the reader; the program neither blocks nor fails."""
    n = 2000
    out = tmp("fifo")
    d = tmp("fifo-logs")
    fifo = os.path.join(d, "app-1.log")
    os.mkfifo(fifo)
    got = os.path.join(d, "read.txt")
    # the reader: a separate process, started first; the subject's open waits for it
    reader = subprocess.Popen(["sh", "-c", 'exec cat "$1" > "$2"', "sh", fifo, got])
    try:
        record_tmpl(out, linked, "fifo", fifo, str(n), env={"VIGIL_LOG_FILES": "*/app-*.log"})
        check(reader.wait(timeout=120) == 0, "the FIFO's reader failed")
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
    events, _, _ = merged(models(out))
    fmts = {k[1]: c for k, c in events.items()}
    check(fmts == {t: n for t in FILE_TEMPLATES}, f"templates of the FIFO's lines: {fmts}")
    with open(got) as f:
        only_warnings(f.read().splitlines(), n, "what the FIFO's reader got")


def test_log_rotate(linked=False):
    """A log file rotated (renamed, an empty one created in its place), reopened by the
    program and truncated under it while it runs: every line captured once, only the
    warnings written, each into the file the kernel puts it in."""
    n = 400
    out = tmp("rotate")
    d = tmp("rotate-logs")
    log = os.path.join(d, "app-1.log")
    record_tmpl(out, linked, "rotate", log, str(n), env={"VIGIL_LOG_FILES": "*/app-*.log"})
    events, _, _ = merged(models(out))
    fmts = {k[1]: c for k, c in events.items()}
    check(fmts == {t: n for t in FILE_TEMPLATES}, f"templates of the rotated log: {fmts}")
    with open(log + ".1") as f:  # rounds before the reopen went to the renamed file
        only_warnings(f.read().splitlines(), n // 2, "the rotated file")
    with open(log) as f:  # rounds after the truncation
        only_warnings(f.read().splitlines(), n - 3 * n // 4, "the truncated file")


def test_log_files_linked():
    test_log_files(linked=True)


def test_log_fifo_linked():
    test_log_fifo(linked=True)


def test_log_rotate_linked():
    test_log_rotate(linked=True)


def test_templates_wrap_linked():
    test_templates_wrap(linked=True)


def test_templates_flood_linked():
    test_templates_flood(linked=True)


if __name__ == "__main__":
    main({name[5:]: fn for name, fn in globals().items() if name.startswith("test_")})
