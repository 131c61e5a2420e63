#!/usr/bin/env python3
"""vigil watch live over a Debian server: Debian's redis-server run by `vigil watch` on
its own Unix socket in a temporary folder, driven by redis-benchmark, made to fork a
child (BGSAVE: a process image appearing mid-run, with its own streams) and shut down by
redis-cli. The statements range over the entity relations every recorded process has
(OSProcess, OSThread; the sensor description is empty), one of them a join; the lines
printed live by the update network over the growing trace must equal `vigil query`'s
over the trace the run kept, as a multiset, and the kept trace must hold the child's
image.

usage: follow_redis_test.py BIN-DIR"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

from watch_common import stats_of

VIGIL = os.path.join(sys.argv[1], "vigil")
Q = """range of T is OSThread
range of P is OSProcess
retrieve (T.name, T.id)
retrieve (P.name, P.id, thread = T.name) where P.name = "redis-server" when T overlap P"""


def wait_for(cond, what, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise SystemExit(f"FAIL: {what} within {timeout} s")


def cli(sock, *args):
    return subprocess.run(["redis-cli", "-s", sock, *args], capture_output=True, text=True,
                          timeout=60)


def main():
    work = tempfile.mkdtemp(prefix="vigil-follow-redis-")
    sock = os.path.join(work, "redis.sock")
    ok = False
    watch = None
    try:
        vgl = os.path.join(work, "empty.vgl")
        with open(vgl, "w") as f:
            f.write("package empty;\n")
        kept = os.path.join(work, "kept")
        out, err = open(os.path.join(work, "out"), "w+"), open(os.path.join(work, "err"), "w+")
        watch = subprocess.Popen(
            [VIGIL, "watch", "--sensors", vgl, "--format", "json", "--stats", "--every",
             "50ms", "--lateness", "1s", "--keep", kept, "-e", Q, "--", "redis-server",
             "--port", "0", "--unixsocket", sock, "--dir", work, "--save", "",
             "--appendonly", "no"], stdout=out, stderr=err)
        wait_for(lambda: watch.poll() is not None or cli(sock, "ping").stdout.strip() == "PONG",
                 "redis-server answering")
        if watch.poll() is not None:
            err.seek(0)
            raise SystemExit(f"FAIL: vigil watch exited {watch.returncode}: {err.read()}")
        subprocess.run(["redis-benchmark", "-s", sock, "-n", "20000", "-c", "8", "-q", "-t",
                        "set,get"], capture_output=True, timeout=300, check=True)
        if "Background saving started" not in cli(sock, "bgsave").stdout:
            raise SystemExit("FAIL: BGSAVE was not started")
        wait_for(lambda: "rdb_bgsave_in_progress:0" in cli(sock, "info", "persistence").stdout,
                 "the BGSAVE child ending")
        cli(sock, "shutdown", "nosave")
        watch.wait(timeout=120)
        out.seek(0)
        err.seek(0)
        text, errs = out.read(), err.read()
        st = stats_of(errs)
        if watch.returncode != 0 or not st:
            raise SystemExit(f"FAIL: vigil watch exited {watch.returncode}: {errs}")
        got = sorted(l for l in text.splitlines() if l.startswith("{"))
        q = subprocess.run([VIGIL, "query", kept, "--format", "json", "-e", Q],
                           capture_output=True, text=True, timeout=300)
        want = sorted(l for l in q.stdout.splitlines() if l.startswith("{"))
        images = [d for d in os.listdir(kept) if d.startswith("redis-")]
        if st["evaluation"] != "incremental":
            raise SystemExit(f"FAIL: evaluated by {st['evaluation']}")
        if len(images) < 2:
            raise SystemExit(f"FAIL: the kept trace holds {images}: no BGSAVE child image")
        if not want or got != want:
            raise SystemExit(f"FAIL: {len(got)} lines live, vigil query has {len(want)} over "
                             f"the kept trace ({len(set(got) - set(want))} not in it, "
                             f"{len(set(want) - set(got))} missing)")
        joined = sum('"thread"' in l for l in got)
        print(f"ok  redis-server: {len(got)} tuples live = vigil query over the kept trace "
              f"({len(images)} images, {st['follow']['polls']} polls, "
              f"{st['follow']['late']} late, {joined} join tuples)")
        ok = True
    finally:
        if watch and watch.poll() is None:  # a failure above: the server is ours to stop
            cli(sock, "shutdown", "nosave")
            watch.terminate()  # handed on to redis-server by vigil watch
            try:
                watch.wait(timeout=60)
            except subprocess.TimeoutExpired:
                watch.kill()
                watch.wait()
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"follow_redis_test: kept {work}")


main()
