#!/usr/bin/env python3
"""VIGIL_LAYOUT=shared (docs/trace-format.md "Shared layout"): many short processes
recorded into one trace directory with one metadata, while instrumented programs with
sensors of their own register types at the same time.

Four shell loops run at once, each starting /bin/true N times (Debian's, recorded
unmodified), beside three vg_subject processes that register `test.seq`/`test.all` and
record 2 x 300 sequenced events each. Checked, exactly:
* one directory `shared` with one `metadata`, no directory per image;
* every `true` (and every shell) is an image of its own with its 4 events
  (process.begin, thread.begin, thread.end, process.end; a shell forked to exec
  vg_subject: begin, thread.begin, exec), every test.seq event present
  once with seq 0..299 per thread;
* babeltrace2 reads as many events as `vigil dump`, with the same names; `vigil check`
  reads it; `vigil relations` finds the same tuples (counts per relation, open, unmatched
  ends) as in the same workload recorded with a directory per image;
* the bytes: at most one metadata plus, per image, a 124-byte packet header and 64
  bytes per event (a ceiling from the layout: these events are 16 to 60 bytes), and at
  most a fifth of the same workload recorded with a directory and metadata per image
  (VIGIL_LAYOUT=image);
* the pool of stream files (src/runtime/stream_pool.c): every stream file is a pool-N,
  no more of them than threads can be alive at once, most holding the packets of many
  processes one after another; each file, walked packet by packet here, is one CTF
  stream: packet_seq_num 0, 1, 2, ..., events_discarded and time never going back;
  on disk the trace takes at most a tenth of the per-image recording's blocks.
A second recording runs 20 /bin/true, kills (SIGKILL) a vg_subject while its two threads
hold pool files mid-packet, runs 20 /bin/true and another vg_subject, which claim those
files, and kills a last vg_subject, whose files held earlier processes' packets: each
killed subject's events are each thread's seq 0..k-1 with k at least what it had
committed, everyone else's exact, babeltrace2 reads what `vigil dump` reads (no damage),
a killed thread's file goes on with another process's packets; a file ending in a hole
(a dead holder's packet covering space never written) after other writers reads the same.
"""
import collections
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("VIGIL_BIN", "build/bin")
VIGIL = os.path.join(BIN, "vigil")
SUBJECT = os.path.join(BIN, "vg_subject")
LOOPS, N, SUBJECTS, EVENTS, THREADS = 4, 60, 3, 300, 2


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(*cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    if p.returncode:
        fail(f"{cmd} exited {p.returncode}: {p.stderr[-600:]}")
    return p.stdout


def record(work, layout):
    trace = os.path.join(work, layout)
    loop = f"i=0; while [ $i -lt {N} ]; do /bin/true; i=$((i+1)); done"
    subj = f"{SUBJECT} --events {EVENTS} --threads {THREADS}"
    script = " ".join([f"({loop}) &" for _ in range(LOOPS)] +
                      [f"{subj} & " for _ in range(SUBJECTS)] + ["wait"])
    env = dict(os.environ, VIGIL_LAYOUT=layout)
    run(VIGIL, "record", "-o", trace, "--", "sh", "-c", script, env=env)
    return trace


def file_bytes(trace):
    total = 0
    for root, _, files in os.walk(trace):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def disk_bytes(trace):
    return sum(os.lstat(os.path.join(r, n)).st_blocks * 512
               for r, ds, fs in os.walk(trace) for n in ds + fs)


def packets(path):
    """The packets of a shared-layout stream file: header fields by wire/tsdl_header.h."""
    with open(path, "rb") as f:
        data = f.read()
    off, out = 0, []
    while off < len(data):
        (magic,) = struct.unpack_from("<I", data, off)
        if magic != 0xC1FC1FC1:
            fail(f"{path}: no packet at offset {off}")
        tb, te, content, size, seq, disc, tid, tgen, pid = struct.unpack_from(
            "<QQQQQQIII", data, off + 24)
        gen, image = struct.unpack_from("<Q", data, off + 88)[0], \
            struct.unpack_from("<I", data, off + 104)[0]
        out.append(dict(off=off, begin=tb, end=te, seq=seq, discarded=disc,
                        writer=(pid, gen, image, tid, tgen)))
        if size == 0 or size % 8:
            fail(f"{path}: packet_size {size} at {off}")
        off += size // 8
    return out


def check_pool(trace, max_files):
    """Every stream file a pool file read as one stream; the writers of each, in order."""
    shared = os.path.join(trace, "shared")
    names = [n for n in os.listdir(shared) if n != "metadata" and not n.startswith(".")]
    if not names or any(not re.fullmatch(r"pool-\d+", n) for n in names):
        fail(f"stream files {sorted(names)}: not all pool files")
    if len(names) > max_files:
        fail(f"{len(names)} pool files, more than the {max_files} threads alive at once")
    writers = {}
    for n in names:
        pk = packets(os.path.join(shared, n))
        for i, (a, b) in enumerate(zip(pk, pk[1:])):
            if b["seq"] != a["seq"] + 1 or b["discarded"] < a["discarded"] or \
                    b["begin"] < a["end"]:
                fail(f"{n}: packet {i + 1} does not go on from packet {i}: {a} {b}")
        if pk and pk[0]["seq"] != 0:
            fail(f"{n}: first packet_seq_num {pk[0]['seq']}")
        order = []
        for p in pk:
            if not order or order[-1] != p["writer"]:
                order.append(p["writer"])
        writers[n] = order
    return writers


def progress(path):
    if not os.path.exists(path) or os.path.getsize(path) < 16:
        return (0, 0)
    with open(path, "rb") as f:
        return struct.unpack("<QQ", f.read(16))


def kill_when_going(rec, prog, pidf):
    """SIGKILLs the subject of pidf once both its threads committed 200 events; returns its
    pid and what each thread had committed when it died."""
    deadline = time.monotonic() + 120
    while min(progress(prog)) < 200 or not os.path.exists(pidf) or \
            not open(pidf).read().strip():
        if time.monotonic() > deadline or rec.poll() is not None:
            rec.kill()
            fail(f"the subject to kill did not get going (progress {progress(prog)})")
        time.sleep(0.05)
    pid = int(open(pidf).read())
    os.kill(pid, signal.SIGKILL)
    return pid, progress(prog)


def killed_holder(work):
    """Subjects SIGKILLed while their threads hold pool files mid-packet: the first one's
    files are taken by later processes, the last one's end the trace (its packets' unused
    ends are holes after other writers' packets)."""
    trace = os.path.join(work, "killed")
    prog, pidf = [os.path.join(work, f"progress{i}") for i in (1, 2)], \
        [os.path.join(work, f"pid{i}") for i in (1, 2)]
    loop = "i=0; while [ $i -lt 20 ]; do /bin/true; i=$((i+1)); done"
    slow = f"{SUBJECT} --events 1000000 --threads 2 --sleep-every 20 --progress"
    script = (f"{loop}; {slow} {prog[0]} & echo $! > {pidf[0]}; wait; {loop}; "
              f"{SUBJECT} --events {EVENTS} --threads 2; {slow} {prog[1]} & "
              f"echo $! > {pidf[1]}; wait")
    rec = subprocess.Popen([VIGIL, "record", "-o", trace, "--shared", "--", "sh", "-c",
                            script], stderr=subprocess.PIPE, text=True)
    killed = [kill_when_going(rec, prog[i], pidf[i]) for i in (0, 1)]
    _, err = rec.communicate(timeout=300)
    if rec.returncode:
        fail(f"recording with killed subjects exited {rec.returncode}: {err[-600:]}")
    out = run(VIGIL, "dump", "--json", trace)  # exit 0: no damage
    events = [json.loads(line) for line in out.splitlines()]
    seqs = collections.defaultdict(list)
    for e in events:
        if e["name"] == "test.seq":
            seqs[(e["pid"], e["fields"]["thread"])].append(e["fields"]["seq"])
    kept = 0
    for pid, done in killed:
        got = {t: sorted(v) for (p, t), v in seqs.items() if p == pid}
        if sorted(got) != [0, 1] or any(v != list(range(len(v))) for v in got.values()) \
                or any(len(got[t]) < done[t] for t in (0, 1)):
            fail(f"killed subject {pid}: { {t: len(v) for t, v in got.items()} } events "
                 f"per thread (holes, or fewer than the {done} committed)")
        kept += sum(len(v) for v in got.values())
    later = [sorted(v) for (p, _), v in seqs.items() if p not in {k[0] for k in killed}]
    if later != [list(range(EVENTS))] * 2:
        fail(f"the subject between the kills: {[len(v) for v in later]} events per thread")
    trues = collections.Counter(e["pid"] for e in events if e["proc"] == "true")
    if len(trues) != 40 or set(trues.values()) != {4}:
        fail(f"{len(trues)} true processes around the kills, events {trues}")
    bt = subprocess.run(["babeltrace2", trace], capture_output=True, text=True, timeout=300)
    if bt.returncode or bt.stdout.count("\n") != len(events):
        fail(f"babeltrace2 (exit {bt.returncode}) read {bt.stdout.count(chr(10))} events, "
             f"vigil dump {len(events)}: {bt.stderr[-600:]}")
    writers = check_pool(trace, 8)
    first, last = killed[0][0], killed[1][0]
    if not [n for n, order in writers.items()
            if any(w[0] == first for w in order[:-1]) and order[-1][0] != first]:
        fail(f"no file of the first killed subject went on with another process: {writers}")
    ends = [n for n, order in writers.items() if order[-1][0] == last and len(order) > 1]
    if not ends:
        fail(f"the last killed subject wrote no file after other processes: {writers}")
    # A holder that died with a packet covering space it never touched (its spare): the
    # file ends in a hole there, after other writers' packets; read as before.
    path = os.path.join(trace, "shared", ends[0])
    tail = packets(path)[-1]
    with open(path, "r+b") as f:
        end = os.fstat(f.fileno()).st_size
        os.posix_fallocate(f.fileno(), end, 8192)
        f.seek(tail["off"] + 48)
        f.write(struct.pack("<Q", (end + 8192 - tail["off"]) * 8))
    again = run(VIGIL, "dump", "--json", trace)
    bt = subprocess.run(["babeltrace2", trace], capture_output=True, text=True, timeout=300)
    if again != out or bt.returncode or bt.stdout.count("\n") != len(events):
        fail(f"after a hole at the end of {ends[0]}: vigil dump {len(again.splitlines())} "
             f"events, babeltrace2 {bt.stdout.count(chr(10))} (exit {bt.returncode}), "
             f"before {len(events)}")
    return kept


def main():
    work = tempfile.mkdtemp(prefix="vigil-shared-")
    trace = record(work, "shared")
    entries = sorted(os.listdir(trace))
    dirs = [e for e in entries if os.path.isdir(os.path.join(trace, e))]
    if dirs != ["shared"]:
        fail(f"directories {dirs}, expected only 'shared'")
    metadata = [f for r, _, fs in os.walk(trace) for f in fs if f == "metadata"]
    if len(metadata) != 1:
        fail(f"{len(metadata)} metadata files")
    # the program's sensors and the busy built-ins keep the ids the compact event header
    # holds (0..30), as they would alone (the shared metadata gives a declaration the id
    # the registry prefers when it is still free)
    with open(os.path.join(trace, "shared", "metadata")) as f:
        ids = dict((m.group(1), int(m.group(2))) for m in re.finditer(
            r'event \{\n\tname = "([^"]+)";\n\tid = (\d+);', f.read()))
    mine = {n: i for n, i in ids.items() if n.startswith("test.") or n == "vg.entity.create"}
    if not mine or max(mine.values()) >= 31 or "vg.entity.create" not in mine:
        fail(f"ids {mine}: not all compact ones")

    events = [json.loads(l) for l in run(VIGIL, "dump", "--json", trace).splitlines()]
    by_image = collections.defaultdict(list)
    for e in events:
        by_image[(e["pid"], e["proc"])].append(e["name"])
    trues = [v for (pid, proc), v in by_image.items() if proc == "true"]
    shells = [v for (pid, proc), v in by_image.items() if proc == "sh"]
    four = ["vg.process.begin", "vg.thread.begin", "vg.thread.end", "vg.process.end"]
    if len(trues) != LOOPS * N or any(sorted(v) != sorted(four) for v in trues):
        fail(f"{len(trues)} images of true (expected {LOOPS * N}), event lists "
             f"{collections.Counter(tuple(v) for v in trues)}")
    # The shells: the script and its loops; the forks that exec vg_subject.
    forked = ["vg.process.begin", "vg.thread.begin", "vg.process.exec"]
    if sorted(sorted(v) for v in shells) != sorted(
            [sorted(four)] * (1 + LOOPS) + [sorted(forked)] * SUBJECTS):
        fail(f"shell images: {shells}")
    seqs = collections.defaultdict(list)
    for e in events:
        if e["name"] == "test.seq":
            seqs[(e["pid"], e["fields"]["thread"])].append(e["fields"]["seq"])
    if (len(seqs) != SUBJECTS * THREADS or
            any(sorted(v) != list(range(EVENTS)) for v in seqs.values())):
        fail(f"test.seq per thread: { {k: len(v) for k, v in seqs.items()} }")

    bt = subprocess.run(["babeltrace2", trace], capture_output=True, text=True, timeout=300)
    if bt.returncode:
        fail(f"babeltrace2 exited {bt.returncode}: {bt.stderr[-600:]}")
    # "[time] (+delta) host name: {...}"
    bt_names = collections.Counter(re.match(r"\[[^]]*\] \([^)]*\) \S+ ([^:]+):", l).group(1)
                                   for l in bt.stdout.splitlines())
    if bt_names != collections.Counter(e["name"] for e in events):
        fail(f"babeltrace2 read {sum(bt_names.values())} events {bt_names}, vigil dump "
             f"{len(events)} {collections.Counter(e['name'] for e in events)}")

    run(VIGIL, "check", trace)

    size = file_bytes(trace)
    md = os.path.getsize(os.path.join(trace, "shared", "metadata"))
    ceiling = md + len(by_image) * 124 + 64 * len(events)
    if size > ceiling:
        fail(f"{size} bytes for {len(events)} events of {len(by_image)} images: more than "
             f"the layout's ceiling of {ceiling}")
    other = record(work, "image")
    per_image = file_bytes(other)
    counts = [{r["name"]: (r["tuples"], r["open"], r.get("unmatched_ends"))
               for r in map(json.loads, run(VIGIL, "relations", "--json", t).splitlines())
               if r["name"] != "Clock"}  # its ticks follow the run's duration
              for t in (trace, other)]
    if counts[0] != counts[1]:
        fail(f"relations differ between the layouts: shared {counts[0]}, per image "
             f"{counts[1]}")
    if size * 5 > per_image:
        fail(f"shared layout {size} bytes, one directory per image {per_image}: "
             f"not a fifth")
    # alive at once: the script's shell, each loop's shell and its true, each subject's
    # threads (a shell forked to exec a subject holds one file before the exec)
    writers = check_pool(trace, 1 + 2 * LOOPS + SUBJECTS * (THREADS + 1))
    nwriters = sum(len(v) for v in writers.values())
    if nwriters < len(by_image) or max(len({w[:3] for w in v}) for v in writers.values()) < N:
        fail(f"{len(writers)} pool files, {nwriters} writers for {len(by_image)} images: "
             f"files not handed between processes")
    disk, disk_other = disk_bytes(trace), disk_bytes(other)
    if disk * 10 > disk_other:
        fail(f"on disk {disk} bytes, one directory per image {disk_other}: not a tenth")
    killed = killed_holder(work)
    print(f"ok: {len(events)} events of {len(by_image)} images in {size} bytes "
          f"({size / len(events):.1f} per event; ceiling {ceiling}; one directory per "
          f"image: {per_image}); {len(writers)} pool files; on disk {disk} (per image "
          f"{disk_other}); a killed subject's {killed} events kept")
    shutil.rmtree(work)


main()
