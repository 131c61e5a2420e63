"""Pipes shared by several processes and terminals (docs/net.md "Shared pipes and sockets",
"Terminals"), through `vigil record` and `vigil net split` on real programs:

* jobserver: a parallel, recursive `make -j` (GNU make's jobserver: one pipe read and
  written a byte at a time by every make), from a Makefile generated here;
* pool: Python's `multiprocessing.Pool(4)` (one task pipe read by four workers, one
  result pipe written by four);
* tty: bash from Debian, interactive on a pty the test opens (python3's pty module), fed
  two lines.

The first two run under strace (-f -y -xx), which sees every read and write on each pipe
with its bytes: each recorded send and receive is paired with its system call (same
thread, same pipe, k-th with k-th), and every pair `vigil net split --pairs` made is
checked against the bytes: the bytes the receive got at recv_at are the bytes the send
wrote at send_at. No pair dates a receive before its send, none is refused, nothing is
taken out of order. Run: shared_test.py NAME."""
import glob
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))
from vigil_testlib import VIGIL, Failure, check, main, run, tmpdir  # noqa: E402

VIGIL = os.path.abspath(VIGIL)

STRACE = shutil.which("strace")
# strace -y -xx: read(3<\x70\x69...>, "\x2b", 1) = 1 (the fd's name in hex too)
CALL = re.compile(r'^(read|write)\((\d+)<((?:\\x[0-9a-f]{2})*)>, "((?:\\x[0-9a-f]{2})*)"'
                  r'(\.\.\.)?, \d+\) = (\d+)')
PIPE = re.compile(r"^pipe:\[(\d+)\]$")


def unhex(s):
    return bytes.fromhex(s.replace("\\x", ""))


def need(tool, what):
    if not tool:
        msg = f"{what} not installed (make deps)"
        if os.environ.get("CI") == "true":
            raise Failure(msg)
        print(f"skipped: {msg}")
        sys.exit(77)


def record_straced(d, cmd, cwd=None):
    """Records cmd under strace; returns (trace dir, {(tid, inode): {'read': [...],
    'write': [...]}} of the bytes each call moved, in order)."""
    trace = os.path.join(d, "trace")
    st = os.path.join(d, "st")
    run([STRACE, "-f", "-ff", "-qq", "-y", "-xx", "-s", "1000000", "-e", "signal=none",
         "-e", "trace=read,write", "-o", st, VIGIL, "record", "-o", trace, "--", *cmd],
        check_rc=0, timeout=600, cwd=cwd)
    calls = {}
    for f in glob.glob(st + ".*"):
        tid = int(f.rsplit(".", 1)[1])
        with open(f, errors="replace") as fh:
            for line in fh:
                m = CALL.match(line)
                if not m or int(m.group(6)) == 0:
                    continue
                pm = PIPE.match(unhex(m.group(3)).decode(errors="replace"))
                if not pm:
                    continue
                check(not m.group(5), f"strace cut a payload: {line[:200]}")
                data = unhex(m.group(4))[:int(m.group(6))]
                calls.setdefault((tid, int(pm.group(1))), {"read": [], "write": []})[
                    m.group(1)].append(data)
    return trace, calls


def split(d, trace, rc=None):
    out = os.path.join(d, "nets")
    p = run([VIGIL, "net", "split", trace, "-o", out, "--pairs"])
    check(p.returncode in (0, 1) if rc is None else p.returncode == rc,
          f"split exited {p.returncode}: {p.stderr[-2000:]}")
    with open(os.path.join(out, "index.json")) as f:
        index = json.load(f)
    with open(os.path.join(out, "pairs.json")) as f:
        pairs = json.load(f)
    return out, index, pairs, p


def inode(ev):
    return int(ev["local"].rsplit(":", 1)[1])


def check_against_bytes(index, pairs, calls, shared_min):
    """Every pair's bytes are the bytes written (strace), in time order, none refused."""
    m = index["messages"]
    check(m["shared_channels"] >= shared_min,
          f"{m['shared_channels']} shared channels, expected at least {shared_min}: {m}")
    check(index["backwards"] == 0, f"{index['backwards']} received before sent: "
          f"{index['backwards_list'][:3]}")
    check(index["forced"] == 0, f"{index['forced']} taken out of order (contradictions)")
    check(m["refused"] == 0, f"{m['refused']} pairs refused")
    # every recorded event on a pipe, each once, paired with its system call
    events = {}
    for p in pairs:
        for side in ("send", "recv"):
            e = p[side]
            events[(e["pid"], e["tid"], e["ts"], e["kind"], e["offset"])] = e
    for e in index["unmatched"]:
        events[(e["pid"], e["tid"], e["ts"], e["kind"], e["offset"])] = e
    seq = {}
    for key, e in sorted(events.items(), key=lambda kv: kv[1]["ts"]):
        if e.get("conn_kind") != "pipe":
            continue
        seq.setdefault((e["tid"], inode(e), e["kind"]), []).append(key)
    payload = {}
    for (tid, ino, kind), keys in seq.items():
        got = calls.get((tid, ino), {}).get("write" if kind == "send" else "read", [])
        lens = [events[k]["len"] for k in keys]
        check(lens == [len(b) for b in got],
              f"thread {tid} pipe {ino} {kind}s: recorded lengths {lens[:20]}, strace "
              f"{[len(b) for b in got][:20]}")
        for k, b in zip(keys, got):
            payload[k] = b
    checked = 0
    cover = {}
    for p in pairs:
        s, r = p["send"], p["recv"]
        if s.get("conn_kind") != "pipe":
            continue
        check(r["ts"] >= s["ts"], f"a receive before its send: {p}")
        sb = payload[(s["pid"], s["tid"], s["ts"], s["kind"], s["offset"])]
        rb = payload[(r["pid"], r["tid"], r["ts"], r["kind"], r["offset"])]
        n, sa, ra = p["bytes"], p["send_at"], p["recv_at"]
        check(sa + n <= len(sb) and ra + n <= len(rb), f"pair out of range: {p}")
        check(sb[sa:sa + n] == rb[ra:ra + n],
              f"pid {r['pid']} read {rb[ra:ra + n][:40]!r} but the matched send of pid "
              f"{s['pid']} wrote {sb[sa:sa + n][:40]!r}")
        rk = (r["pid"], r["tid"], r["ts"], r["offset"])
        cover[rk] = cover.get(rk, 0) + n
        check(cover[rk] <= r["len"], f"receive matched to more bytes than it got: {r}")
        checked += n
    return checked


def jobserver():
    need(STRACE, "strace")
    d = tmpdir("shared-make")
    # a top make running 6 sub-makes of 16 targets each, -j4: tokens move between all
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("all: " + " ".join(f"s{i}" for i in range(6)) + "\n")
        for i in range(6):
            f.write(f"s{i}:\n\t+@$(MAKE) -s -f sub.mk N={i}\n")
    with open(os.path.join(d, "sub.mk"), "w") as f:
        f.write("all: " + " ".join(f"t{j}" for j in range(16)) + "\n")
        for j in range(16):
            f.write(f"t{j}:\n\t@echo $(N).{j} > out.$(N).{j}\n")
    trace, calls = record_straced(d, ["make", "-s", "-j4"], cwd=d)
    check(len(glob.glob(os.path.join(d, "out.*"))) == 96, "the build did not make 96 files")
    _, index, pairs, _ = split(d, trace)
    n = check_against_bytes(index, pairs, calls, 1)
    # the jobserver's tokens went between several makes: some read by another process
    # than the one that wrote them
    tokens = [p for p in pairs if p["send"]["conn_kind"] == "pipe" and p["bytes"] == 1
              and p["send"]["len"] == 1]
    check(any(p["send"]["pid"] != p["recv"]["pid"] for p in tokens),
          "no token went from one make to another")
    print(f"{n} bytes checked in {len(pairs)} pairs; {index['messages']}")


POOL = r"""
import multiprocessing as mp, sys
def f(x):
    return (x, "r" * (x % 7))
if __name__ == "__main__":
    with mp.Pool(4) as p:
        r = p.map(f, range(300), chunksize=1)
    assert r == [(x, "r" * (x % 7)) for x in range(300)]
    print("ok")
"""


def pool():
    need(STRACE, "strace")
    d = tmpdir("shared-pool")
    prog = os.path.join(d, "pool.py")
    with open(prog, "w") as f:
        f.write(POOL)
    trace, calls = record_straced(d, ["/usr/bin/python3", prog])
    _, index, pairs, _ = split(d, trace)
    n = check_against_bytes(index, pairs, calls, 2)
    # the four workers read the task pipe: each got tasks from the parent's writes
    readers = {p["recv"]["pid"] for p in pairs if p["send"]["conn_kind"] == "pipe"
               and p["send"]["pid"] != p["recv"]["pid"]}
    check(len(readers) >= 4, f"receivers of pipe bytes: {readers}")
    print(f"{n} bytes checked in {len(pairs)} pairs; {index['messages']}")


def read_until(fd, done, seen, deadline):
    """Reads the pty's output into seen until done(seen), EOF or the deadline."""
    while not done(seen) and time.time() < deadline:
        r, _, _ = select.select([fd], [], [], max(0.0, deadline - time.time()))
        if not r:
            break
        try:
            b = os.read(fd, 4096)
        except OSError:
            break
        if not b:
            break
        seen.extend(b)
    return done(seen)


def tty():
    bash = "/bin/bash"
    need(os.path.exists(bash) and bash, "bash")
    d = tmpdir("shared-tty")
    trace = os.path.join(d, "trace")
    master, slave = pty.openpty()
    env = dict(os.environ, PS1="PROMPT> ", TERM="dumb", HOME=d, INPUTRC="/dev/null")

    def child():
        os.setsid()
        import fcntl
        import termios
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    p = subprocess.Popen([VIGIL, "record", "-o", trace, "--", bash, "--norc", "--noprofile",
                          "-i"], stdin=slave, stdout=slave, stderr=slave, env=env,
                         preexec_fn=child, close_fds=True)
    os.close(slave)
    seen = bytearray()
    try:
        deadline = time.time() + 60
        check(read_until(master, lambda b: b"PROMPT> " in b, seen, deadline),
              f"no prompt: {bytes(seen)!r}")
        os.write(master, b"/bin/echo one$((40+2))\r")  # typed: the shell reads it byte by byte
        check(read_until(master, lambda b: b"PROMPT> " in b[b.find(b"one42\r\n"):] and
                         b"one42\r\n" in b, seen, deadline),
              f"no answer and prompt: {bytes(seen)!r}")
        os.write(master, b"exit\r")
        end = time.time() + 60
        while p.poll() is None and time.time() < end:
            read_until(master, lambda b: False, seen, min(end, time.time() + 0.5))
        check(p.poll() == 0, f"vigil record -- bash exited {p.poll()}: {bytes(seen)!r}")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)
    out = os.path.join(d, "nets")
    run([VIGIL, "net", "split", trace, "-o", out], check_rc=0)
    with open(os.path.join(out, "index.json")) as f:
        index = json.load(f)
    nets = index["networks"]
    tty_nets = [n for n in nets if n["input"] == "tty"]
    # the two lines typed, and nothing else: not one per byte, no stray network
    check(len(tty_nets) == 2 and len(nets) == 2,
          f"{len(nets)} networks, {len(tty_nets)} from the terminal, expected 2 lines: "
          f"{[(n['program'], n['vertices']) for n in nets]}")
    with open(os.path.join(out, nets[0]["file"])) as f:
        first = json.load(f)
    execs = [v.get("text") for v in first["vertices"] if v["kind"] == "process.exec"]
    check(any("echo" in (x or "") for x in execs),
          f"the first line's network does not hold the exec of /bin/echo: {execs}")
    print(f"networks: {[(n['program'], n['vertices'], n['response_ns']) for n in nets]}")


if __name__ == "__main__":
    main({"jobserver": jobserver, "pool": pool, "tty": tty})
