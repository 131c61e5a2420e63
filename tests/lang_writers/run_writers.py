"""The Python, Java and Perl writers that `vigil gen` makes, sending to a real vigild
started here (tests/lang_writers.cmake). From tests/lang_writers/writers.vgl, the same emissions
(values.json) are fired by a C program with the generated C sensors (recorded locally by
`vigil record`), a Python program (over TCP), a Java program (over the Unix socket) and
a Perl program (over TCP, Debian's /usr/bin/perl);
`vigil dump --json` of the collector's trace must show, for each, exactly the events and
field values of the C program's trace: the same names and fields, byte for byte (strings
cut at their max inside a UTF-8 character, bytes cut, uint64 extremes, sampled interval
ends led by vg_since 0), and `vigil relations` the same tuples.

  run_writers.py python | java | perl | nocollector | nocollector-perl | restart |
                 restart-perl |
                 probes-python | probes-java | probes-perl

probes-*: against a stdlib fake collector (fake_collector.py) that decodes every frame
strictly, reads the sensor table (`list 0`) and switches one sensor off (`probe ID off`):
its records stop, the others and a record emitted alone (announced by NOTE) arrive.

Needs VIGIL_BIN (vigil, vigild, libvigil.so), python3, cc, javac/java 17."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.abspath(os.environ.get("VIGIL_BIN", "build/bin"))
SRC = os.path.dirname(os.path.dirname(HERE))
VIGIL, VIGILD = os.path.join(BIN, "vigil"), os.path.join(BIN, "vigild")
VALUES = os.path.join(HERE, "values.json")
PERL = "/usr/bin/perl"
EMISSIONS = json.load(open(VALUES))["emissions"]


def leave(work):
    """In a finally: removes work, or keeps it when an exception is on its way out."""
    if sys.exc_info()[0] is None:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"run_writers: kept {work}", file=sys.stderr)


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)
    if p.returncode != 0:
        raise Failure(f"{' '.join(cmd)} exited {p.returncode}\n{p.stdout[-3000:]}"
                      f"{p.stderr[-3000:]}")
    return p


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Collector:
    def __init__(self, work, port, out):
        self.work, self.port, self.out = work, port, out
        self.sock = os.path.join(work, "vigild.sock")
        self.proc = None

    def start(self):
        ready = os.path.join(self.work, "ready")
        if os.path.exists(ready):
            os.remove(ready)
        self.log = open(os.path.join(self.work, "vigild.log"), "a")
        self.proc = subprocess.Popen([VIGILD, "-o", self.out, "--listen",
                                      f"127.0.0.1:{self.port}", "--socket", self.sock,
                                      "--ready", ready], stdout=self.log, stderr=self.log)
        for _ in range(500):
            if os.path.exists(ready) and os.path.getsize(ready):
                return
            check(self.proc.poll() is None, "vigild exited:\n" + self.logtext())
            time.sleep(0.02)
        raise Failure("vigild never became ready")

    def logtext(self):
        return open(os.path.join(self.work, "vigild.log")).read()[-3000:]

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def c_literal(t, v):
    if t == "str":
        b = v.encode()
        return '"' + "".join("\\x%02x" % c for c in b) + '"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, int) and v < 0:
        return "(%d - 1)" % (v + 1) if v == -9223372036854775808 else str(v)
    return str(v) + ("ULL" if isinstance(v, int) and v > 2147483647 else "")


ORDER = {"Job": ["worker", "queue", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
                 "f", "ok", "name", "blob"],
         "Hold": ["worker", "queue"], "Phase": ["worker", "phase"]}
ORDER["Urgent"] = ORDER["Job"] + ["priority"]


def c_driver(gen):
    """A C program firing the emissions through the generated C sensors."""
    lines = ['#include <stdio.h>', '#include "wtest_sensors.h"', "static vg_entity W, Q;",
             "int main(void)", "{", "\twtest_sensors_register();",
             '\tvg_entity_create(&W, WTEST_KIND_Worker, 1, "w");',
             '\tvg_entity_create(&Q, WTEST_KIND_Queue, 2, "q");',
             '\tprintf("{\\"W\\": [%llu, %u], \\"Q\\": [%llu, %u]}\\n", '
             "(unsigned long long)W.id, W.gen, (unsigned long long)Q.id, Q.gen);"]
    for e in EMISSIONS:
        args = []
        for k in ORDER[e["record"]]:
            v = e["values"][k]
            if k in ("worker", "queue"):
                args.append("&" + v if v else "NULL")
            elif k == "blob":
                b = bytes.fromhex(v)
                args += ['"' + "".join("\\x%02x" % c for c in b) + '"', str(len(b))]
            elif k in ("name", "phase"):
                args.append(c_literal("str", v))
            else:
                args.append(c_literal("num", v))
        fn = "wtest_" + e["sensor"].replace(".", "_")
        lines.append("\t%s(%s);" % (fn, ", ".join(args)))
    lines += ["\treturn 0;", "}"]
    src = os.path.join(gen, "c_driver.c")
    open(src, "w").write("\n".join(lines) + "\n")
    exe = os.path.join(gen, "c_driver")
    run(["cc", "-std=gnu11", "-O1", f"-I{gen}", f"-I{SRC}/include", "-o", exe, src,
         os.path.join(gen, "wtest_sensors.c"), f"-L{BIN}", "-lvigil", f"-Wl,-rpath,{BIN}"])
    return exe


JAVA_TYPES = {"i8": "(byte) ", "i16": "(short) ", "i32": "", "i64": "", "u8": "(short) ",
              "u16": "", "u32": "", "u64": ""}


def java_driver(gen, ents, to, go=None):
    """A Java program firing the emissions through VglWriter and VglSensors."""
    body = []
    for i, e in enumerate(EMISSIONS):
        cls = e["record"]
        body.append(f"        {cls} r{i} = new {cls}();")
        for k, v in e["values"].items():
            if k in ("worker", "queue"):
                x = ("new EntityRef(%dL, %d)" % tuple(ents[v])) if v else "EntityRef.NONE"
            elif k == "blob":
                x = "new byte[] {%s}" % ", ".join(str(b - 256 if b > 127 else b)
                                                  for b in bytes.fromhex(v))
            elif k in ("name", "phase"):
                x = json.dumps(v)  # a JSON string is a Java string literal here
            elif isinstance(v, bool):
                x = "true" if v else "false"
            elif isinstance(v, float):
                x = repr(v) + "d"
            elif k == "u64" and v > 9223372036854775807:
                x = "%dL" % (v - (1 << 64))
            elif k == "i64" and v == -9223372036854775808:
                x = "Long.MIN_VALUE"
            else:
                x = JAVA_TYPES.get(k, "") + str(v) + ("L" if k in ("i64", "u32", "u64") else "")
            body.append(f"        r{i}.{k} = {x};")
        body.append(f"        VglSensors.{e['sensor'].replace('.', '_')}(w, r{i});")
    wait = ("        while (!new java.io.File(%s).exists())\n            Thread.sleep(20);"
            % json.dumps(go)) if go else ""
    extra = "        VglSensors.record(w, new Job());" if go else ""
    src = f"""import vigil.wtest.*;

public class WriterDriver {{
    public static void main(String[] args) throws Exception {{
        VglWriter w = new VglWriter({json.dumps(to)});
{wait}
{chr(10).join(body)}
{extra}
        boolean ok = w.close(20000);
        System.out.println("{{\\"sent\\": " + w.sent() + ", \\"dropped\\": " + w.dropped()
                           + ", \\"off\\": " + w.off() + ", \\"closed_ok\\": " + ok + "}}");
    }}
}}
"""
    path = os.path.join(gen, "WriterDriver.java")
    open(path, "w").write(src)
    sources = [path]
    for root, _d, files in os.walk(os.path.join(gen, "vigil")):
        sources += [os.path.join(root, f) for f in files if f.endswith(".java")]
    run(["javac", "-Xlint:all", "-Werror", "-d", os.path.join(gen, "classes")] + sources)
    return ["java", "-cp", os.path.join(gen, "classes"), "WriterDriver"]


def events(trace):
    """[(pid, name, fields)] of `vigil dump --json`, entity references as (kind, id, gen)."""
    out = []
    for line in run([VIGIL, "dump", "--json", trace]).stdout.splitlines():
        o = json.loads(line)
        fields = {k: (v["kind"], v["id"], v["gen"]) if isinstance(v, dict) and "kind" in v
                  else v for k, v in o["fields"].items()}
        out.append((o["pid"], o["name"], fields))
    return out


def relations(trace, pid_dir):
    """Tuples of the wtest relations: {name: sorted (values, times relative)}."""
    rel = {}
    for line in run([VIGIL, "relations", "--json", trace]).stdout.splitlines():
        o = json.loads(line)
        if o["name"] in ("Submit", "Escalate", "Holding", "WorkerPhase"):
            rel[o["name"]] = (o["kind"], o["tuples"], o["open"], [a["name"] for a in
                                                                   o["attributes"]])
    return rel


def setup(work):
    gen = os.path.join(work, "gen")
    run([VIGIL, "gen", os.path.join(HERE, "writers.vgl"), "-l", "python", "-l", "java", "-l",
         "c", "-l", "perl", "-o", gen])
    ctrace = os.path.join(work, "ctrace")
    p = run([VIGIL, "record", "-q", "-o", ctrace, "--", c_driver(gen)])
    ents = json.loads(p.stdout.strip().splitlines()[-1])
    want = [(n, f) for _p, n, f in events(ctrace) if n.startswith("wtest.")]
    check(len(want) == len(EMISSIONS), f"the C trace has {len(want)} wtest events")
    return gen, ctrace, ents, want


def collector_events(out):
    hosts = [h for h in os.listdir(out) if not h.startswith(".")]
    check(len(hosts) == 1, f"collector hosts: {hosts}")
    return os.path.join(out, hosts[0]), events(os.path.join(out, hosts[0]))


def compare(got, want, who):
    check(len(got) == len(want), f"{who}: {len(got)} events, the C program recorded "
          f"{len(want)}:\n{got}\n{want}")
    for i, (g, w) in enumerate(zip(got, want)):
        check(g == w, f"{who}: event {i} differs from the C sensors':\n  got  {g}\n  want {w}")


def test_lang(lang):
    work = tempfile.mkdtemp(prefix="vigil-writers-")
    col = None
    try:
        gen, ctrace, ents, want = setup(work)
        out = os.path.join(work, "out")
        col = Collector(work, free_port(), out)
        col.start()
        if lang == "python":
            to = f"127.0.0.1:{col.port}"
            p = run(["/usr/bin/python3", os.path.join(HERE, "py_driver.py"), gen, VALUES, to,
                     json.dumps(ents), "send"])
        elif lang == "perl":
            run([PERL, "-wc", "-I", gen, os.path.join(gen, "wtest_records.pm")])
            p = run([PERL, os.path.join(HERE, "pl_driver.pl"), gen, VALUES,
                     f"127.0.0.1:{col.port}", json.dumps(ents), "send"])
        else:
            p = run(java_driver(gen, ents, "unix:" + col.sock))
        stats = json.loads(p.stdout.strip().splitlines()[-1])
        check(stats["closed_ok"] and stats["dropped"] == 0 and
              stats["sent"] == len(EMISSIONS), f"{lang} writer: {stats}")
        col.stop()
        trace, evs = collector_events(out)
        check(len({pid for pid, _n, _f in evs}) == 1, "one subject expected")
        compare([(n, f) for _p, n, f in evs], want, lang)
        # The relations: the same kinds, tuple counts and attributes as the C program's.
        check(relations(trace, None) == relations(ctrace, None),
              f"{lang}: relations differ:\n{relations(trace, None)}\n"
              f"{relations(ctrace, None)}")
        # The collector names the writer's language in the trace's metadata (HELLO kind).
        metas = [os.path.join(d, "metadata") for d, _s, fs in os.walk(trace) if "metadata" in fs]
        check(len(metas) == 1, f"{lang}: metadata files {metas}")
        meta = open(metas[0], encoding="utf-8", errors="replace").read()
        check(f'vigil_lang = "{lang}";' in meta, f"{lang}: metadata says "
              f"{[l for l in meta.splitlines() if 'vigil_lang' in l]}")
        print(f"{lang}: {len(evs)} events equal to the C sensors'; {stats}")
    except Failure:
        if col:
            print(col.logtext(), file=sys.stderr)
        raise
    finally:
        if col:
            col.stop()
        leave(work)


def test_nocollector(lang):
    """No collector: emit never blocks, a full buffer drops and counts."""
    work = tempfile.mkdtemp(prefix="vigil-writers-")
    try:
        gen = os.path.join(work, "gen")
        run([VIGIL, "gen", os.path.join(HERE, "writers.vgl"), "-l", lang, "-o", gen])
        # Each Phase record: 12 (ref) + 2 ("x\0") bytes of fields + 18 of header = 32.
        drv = (["/usr/bin/python3", os.path.join(HERE, "py_driver.py")] if lang == "python"
               else [PERL, os.path.join(HERE, "pl_driver.pl")])
        p = run(drv + [gen, VALUES, f"127.0.0.1:{free_port()}", "-", "full", "1000",
                       str(32 * 100)])
        s = json.loads(p.stdout)
        check(s["queued"] == 100 and s["dropped"] == 900 and not s["closed_ok"] and s["error"],
              f"no collector: {s}")
        print(f"nocollector-{lang}: {s}")
    finally:
        leave(work)


def test_restart(lang):
    """The collector is killed after the first half was acknowledged and restarted while
    the second half waits: every record arrives exactly once."""
    work = tempfile.mkdtemp(prefix="vigil-writers-")
    col = None
    try:
        gen, _ctrace, ents, want = setup(work)
        out = os.path.join(work, "out")
        col = Collector(work, free_port(), out)
        col.start()
        half, go = os.path.join(work, "half"), os.path.join(work, "go")
        drv = (["/usr/bin/python3", os.path.join(HERE, "py_driver.py")] if lang == "python"
               else [PERL, os.path.join(HERE, "pl_driver.pl")])
        drv = subprocess.Popen(drv + [gen, VALUES, f"127.0.0.1:{col.port}", json.dumps(ents),
                                      "restart", half, go], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        for _ in range(1000):
            if os.path.exists(half) or drv.poll() is not None:
                break
            time.sleep(0.02)
        if not os.path.exists(half):
            drv.kill()
            so, se = drv.communicate()
            raise Failure(f"the driver never reported the first half (exit {drv.returncode}):"
                          f"\n{so}{se}\n{col.logtext()}")
        check(open(half).read() == "flushed",
              "the first half was not acknowledged:\n" + col.logtext())
        col.kill()
        open(go, "w").close()  # the second half is queued while no collector runs
        time.sleep(0.3)
        col.start()
        so, se = drv.communicate(timeout=60)
        check(drv.returncode == 0, f"driver: {se}")
        stats = json.loads(so.strip().splitlines()[-1])
        check(stats["closed_ok"] and stats["dropped"] == 0, f"restart: {stats}")
        col.stop()
        # Protocol v2: the session has a secret (the collector's state file keeps it) and
        # the writer resumed it with that secret after the restart.
        states = [os.path.join(d, f) for d, _s, fs in os.walk(os.path.join(out, ".vigild"))
                  for f in fs if f.endswith(".state")]
        check(len(states) == 1 and "secret " in open(states[0]).read(), f"state {states}")
        check("without its secret" not in col.logtext(), col.logtext())
        _trace, evs = collector_events(out)
        compare([(n, f) for _p, n, f in evs], want, f"restart-{lang}")
        print(f"restart-{lang}: {len(evs)} events, each once; {stats}")
    finally:
        if col:
            col.stop()
        leave(work)


def test_probes(lang):
    """Frames checked by a fake collector that also switches wtest.Submit off."""
    sys.path.insert(0, HERE)
    from fake_collector import FakeCollector
    work = tempfile.mkdtemp(prefix="vigil-writers-")
    try:
        gen = os.path.join(work, "gen")
        run([VIGIL, "gen", os.path.join(HERE, "writers.vgl"), "-l", "python", "-l", "java",
             "-l", "perl", "-o", gen])
        go = os.path.join(work, "go")
        fake = FakeCollector("wtest.Submit", go)
        to = f"127.0.0.1:{fake.port}"
        ents = {"W": [1, 0], "Q": [2, 0]}
        if lang == "python":
            p = run(["/usr/bin/python3", os.path.join(HERE, "py_driver.py"), gen, VALUES, to,
                     json.dumps(ents), "probes", go])
        elif lang == "perl":
            p = run([PERL, os.path.join(HERE, "pl_driver.pl"), gen, VALUES, to,
                     json.dumps(ents), "probes", go])
        else:
            p = run(java_driver(gen, ents, to, go))
        fake.thread.join(30)
        seen = fake.seen
        check(seen["error"] is None, f"fake collector: {seen['error']}")
        stats = json.loads(p.stdout.strip().splitlines()[-1])
        n_submit = sum(e["sensor"] == "Submit" for e in EMISSIONS)
        check(stats["closed_ok"] and stats["dropped"] == 0 and stats["off"] == n_submit,
              f"{lang} writer: {stats}")
        h = seen["hello"]
        check(h["version"] == 2 and h.get("secret") == b"" and h["kind"] == {"python": 1, "java": 2, "perl": 4}[lang] and
              h["host"] == socket.gethostname() and h["start"] > 0 and h["program"] and
              h["token"] == "", f"HELLO {h}")
        sensors = ["wtest.Submit", "wtest.Escalate", "wtest.Holding.begin",
                   "wtest.Holding.end", "wtest.WorkerPhase"]
        table = seen["table"].split()
        check(table[0] == "ok" and table[2] == "5" and
              table[3:] == [f"{i}:{n}:1" for i, n in enumerate(sensors)], f"list: {table}")
        answers = [a.split()[0] + (" " + a.split()[2] if a.startswith("ok") else "")
                   for _l, a in seen["replies"]]
        check(answers == ["ok 5", "ok 1", "ok 0", "error", "error"],
              f"replies: {seen['replies']}")
        got = [r[0] for r in seen["records"]]
        want = ["wtest." + e["sensor"] for e in EMISSIONS if e["sensor"] != "Submit"]
        check(got == want + ["wtest.Job"], f"records {got}")
        check(seen["notes"] == ["registered 5 wtest.Job"], f"notes {seen['notes']}")
        check(seen["schemas"][5][:5] == ("wtest.Job", "Job", 0, 0, 0), "the Job schema")
        check(seen["schemas"][3][5][0] == ("vg_since", 7, ""), "Holding.end leads with vg_since")
        check(seen["bye"] and seen["seqs"][0] == 1, f"bye {seen['bye']} seqs {seen['seqs']}")
        now = time.time_ns()
        check(all(abs(t - now) < 3600 * 10**9 for _e, t, _tid, _b in seen["records"]),
              "time_ns is not CLOCK_REALTIME")
        print(f"probes-{lang}: {len(got)} records, Submit switched off ({stats['off']} "
              f"not sent), replies {answers}")
    finally:
        leave(work)


def main():
    what = sys.argv[1]
    try:
        if what in ("python", "java", "perl"):
            test_lang(what)
        elif what.startswith("nocollector"):
            test_nocollector("perl" if what.endswith("-perl") else "python")
        elif what.startswith("restart"):
            test_restart("perl" if what.endswith("-perl") else "python")
        elif what.startswith("probes-"):
            test_probes(what[7:])
        else:
            sys.exit(f"unknown test {what}")
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)


main()
