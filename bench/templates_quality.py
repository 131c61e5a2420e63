#!/usr/bin/python3
"""bench/templates_quality.py: how well the capture's message templates (docs/logcapture.md,
"Templates") group real logs: PostgreSQL 15 at debug5, nginx's debug error log, redis at
verbose, each produced here by the real server under load, templated line by line by
the runtime's own function (build/bench/tmpl-tool). For PostgreSQL the log is also
captured under `vigil record` (stderr, VIGIL_LOG_PASS=all so that it is written too),
and the model's templates are compared with the tool's on the written lines.

    templates_quality.py BUILD [--seconds N] [--keep DIR]

Prints per server: lines, templates, the most frequent templates, and two kinds of
suspects for a reader to judge:
  split  templates that differ only in a masked or number-bearing token (one statement
         may have become several templates: `<n>` against `<hex>`, a short number kept)
  merged templates whose lines differ in words the masks hide (quoted strings, paths):
         different objects of one statement (by design) or different statements."""
import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "logmodel"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "net", "record"))
import pgharness  # noqa: E402


def templates(tool, lines):
    r = subprocess.run([tool], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, errors="replace", check=True)
    return [ln.split("\t", 1)[1] for ln in r.stdout.splitlines()]


def skeleton(t):
    """The template without its placeholders and tokens with digits."""
    t = re.sub(r"<(n|hex|path|s)>", " ", t)
    t = re.sub(r"\S*\d\S*", " ", t)
    return " ".join(t.split())


def literal(line):
    """A line's words without numbers: what differs when masks merged different texts."""
    return " ".join(w for w in re.findall(r"[A-Za-z_][A-Za-z_]*", line))


def report(name, lines, tmpls, top=8):
    by = collections.Counter(tmpls)
    print(f"\n## {name}: {len(lines)} lines, {len(by)} templates\n")
    for t, c in by.most_common(top):
        print(f"  {c:7d}  {t[:150]}")
    groups = collections.defaultdict(set)
    for t in by:
        groups[skeleton(t)].add(t)
    split = [sorted(g) for g in groups.values() if len(g) > 1]
    lits = collections.defaultdict(set)
    for ln, t in zip(lines, tmpls):
        lits[t].add(literal(ln))
    merged = [(t, sorted(v)) for t, v in lits.items() if len(v) > 1]
    print(f"\n  split suspects: {len(split)} groups ({sum(len(g) for g in split)} templates)")
    for g in split[:6]:
        print("    " + "  |  ".join(x[:90] for x in g[:3]))
    print(f"  merged suspects: {len(merged)} templates")
    for t, v in merged[:6]:
        print(f"    {t[:90]}\n      <- {len(v)} texts, e.g. {v[0][-60:]!r} / {v[1][-60:]!r}")
    return {"lines": len(lines), "templates": len(by), "split": len(split),
            "merged": len(merged)}


def postgres(build, seconds, keep):
    pg_bin = sorted(d for d in (os.path.join("/usr/lib/postgresql", v, "bin")
                                for v in os.listdir("/usr/lib/postgresql")))[-1]
    pg = pgharness.PgServer(pg_bin, os.path.join(build, "bin"), keep=keep)
    try:
        pg.initdb({"log_min_messages": "warning", "log_destination": "'stderr'",
                   "fsync": "off", "synchronous_commit": "off", "log_checkpoints": "on",
                   "autovacuum_naptime": "'1s'"})
        pg.start(out="init.out")
        pg.pgbench(["-i", "-q", "-s", "2"])
        pg.stop()
        trace = pg.path("trace")
        pg.start(record=trace, env={"VIGIL_LOG_PASS": "all"}, out="server.out")
        pg.set_conf({"log_min_messages": "debug5"})
        pg.reload()
        pg.psql("SELECT 1")
        pg.pgbench(["-n", "-c", "2", "-T", str(seconds)], every=2.0, statement="CHECKPOINT;")
        pg.set_conf({"log_min_messages": "warning"})
        pg.stop()
        with open(pg.path("server.out"), errors="replace") as f:
            lines = [ln for ln in f.read().splitlines() if ln.strip()]
        tmpls = templates(os.path.join(build, "bench", "tmpl-tool"), lines)
        res = report("PostgreSQL 15, debug5, stderr (pgbench, CHECKPOINT every 2 s, "
                     "autovacuum_naptime 1s)", lines, tmpls)
        # The capture's own templates: those of its write(2) site(s) in the model.
        model = pg.path("m.vgm")
        subprocess.run([os.path.join(build, "bin", "vigil"), "model", trace, "-o", model],
                       check=True, capture_output=True)
        captured = set()
        with open(model, encoding="utf-8") as f:
            for ln in f:
                m = re.match(r'event \d+ \d+ \S+ "(.*)"$', ln.rstrip("\n"))
                if m:
                    captured.add(bytes(m.group(1), "utf-8").decode("unicode_escape"))
        offline = set(tmpls)
        print(f"\n  captured in the model: {len(captured & offline)} of the {len(offline)} "
              f"templates of the written lines ({len(captured - offline)} model events "
              f"not among them: lines written before the reload, other sites)")
        res["captured"] = len(captured & offline)
        return res
    finally:
        pg.cleanup()


def nginx(build, keep):
    import nginx_server
    d = keep or tempfile.mkdtemp(prefix="vigil-tmplq-nginx-")
    try:
        conf, port = nginx_server.make(d, {"index.html": b"hello\n"}, workers=1)
        with open(conf) as f:
            text = f.read()
        with open(conf, "w") as f:
            f.write(text.replace("http {", f"error_log {d}/debug.log debug;\nhttp {{", 1))
        proc = subprocess.Popen(nginx_server.command(conf, d), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 30
            while time.time() < deadline and not os.path.exists(os.path.join(d, "nginx.pid")):
                time.sleep(0.1)
            for i in range(200):
                path = "/" if i % 3 else "/missing-%d" % i
                subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://127.0.0.1:{port}{path}"],
                               check=False)
        finally:
            proc.send_signal(signal.SIGQUIT)
            proc.wait(timeout=60)
        with open(os.path.join(d, "debug.log"), errors="replace") as f:
            lines = [ln for ln in f.read().splitlines() if ln.strip()]
        return report("nginx, debug error log (200 requests, a third 404)", lines,
                      templates(os.path.join(build, "bench", "tmpl-tool"), lines))
    finally:
        if not keep:
            shutil.rmtree(d, ignore_errors=True)


def redis(build, keep):
    d = keep or tempfile.mkdtemp(prefix="vigil-tmplq-redis-")
    try:
        sock = os.path.join(d, "redis.sock")
        proc = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", sock,
                                 "--loglevel", "verbose", "--logfile", os.path.join(d, "r.log"),
                                 "--dir", d, "--save", "1 1"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 30
            while time.time() < deadline and not os.path.exists(sock):
                time.sleep(0.1)
            for i in range(300):
                subprocess.run(["redis-cli", "-s", sock, "SET", f"k{i}", "v"],
                               capture_output=True, check=False)
            subprocess.run(["redis-cli", "-s", sock, "BGSAVE"], capture_output=True)
            time.sleep(1.5)  # a benchmark: let the background save log its lines
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        with open(os.path.join(d, "r.log"), errors="replace") as f:
            lines = [ln for ln in f.read().splitlines() if ln.strip()]
        return report("redis, verbose (300 clients, a BGSAVE)", lines,
                      templates(os.path.join(build, "bench", "tmpl-tool"), lines))
    finally:
        if not keep:
            shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--keep")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    res = {"postgres": postgres(build, a.seconds, a.keep and os.path.join(a.keep, "pg"))}
    if shutil.which("nginx") or os.path.exists("/usr/sbin/nginx"):
        res["nginx"] = nginx(build, a.keep and os.path.join(a.keep, "nginx"))
    if shutil.which("redis-server") and shutil.which("redis-cli"):
        res["redis"] = redis(build, a.keep and os.path.join(a.keep, "redis"))
    print("\n| log | lines | templates | split suspects | merged suspects |")
    print("|---|---:|---:|---:|---:|")
    for k, v in res.items():
        print(f"| {k} | {v['lines']} | {v['templates']} | {v['split']} | {v['merged']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
