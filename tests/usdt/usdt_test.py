#!/usr/bin/env python3
"""USDT probe sites as sensors (docs/usdt.md), end to end.

  list      vigil usdt list on our subject (every operand form, compiled five ways), on its
            stripped copy, on Debian's PostgreSQL (its count against readelf -n), on libc
            (the path ldd gives), on a process (/proc/PID/maps) and on bad files
  record    vigil record --usdt on each build of the subject, on the int3 path and on the jump
            path: every event's values equal the line the program printed for that probe
            hit; semaphores gate vt:sema; vt:joined (a branch lands inside the bytes a jump
            would displace) stays on the int3 path with one line
  bad       a stripped build (symbol operands not understood) and a site already patched
            by another tool (an int3 over the nop): those sites untouched with one line
            each, the others recorded, the program's own SIGTRAP handler still called; a
            site followed by an endbr64 gets no plan (one line)
  postgres  stock PostgreSQL under pgbench with --usdt 'postgresql:transaction__*': the
            commits counted per session equal pgbench's transactions plus each session's start
  bufferpool  the behaviour-model paper's buffer-pool scenario: stock PostgreSQL under the
            same pgbench run with shared_buffers far too small (16 buffers) and ample, each
            recorded with --usdt 'postgresql:buffer__*'; vigil model and vigil diff rank
            the buffer events of misses (evicting a dirty buffer to read a block) first
  probes    vigil probes --pid PID enable/disable 'usdt:vt:*': events only inside the
            window; vigil check accepts the trace, babeltrace2 reads it
  dlopen    a library with a probe loaded by dlopen through RUNPATH after start, and
            Debian's libpython (python:* probes) loaded by dlopen: events counted, and
            their sites planned by the runtime's planner (the jump path)
  threads   vt:hot switched on and off 12 times while two threads run through it: no
            harm, and every count recorded as the thread counted it
  model     a recording with log models and USDT events: vigil model hints at --from-trace
  collector vigil probes --collector enable/disable 'usdt:vt:ints': relayed by vigild to
            each subject, one connecting later included
  linked    the subject linked with libvigil (what the sanitizer build checks)
  cache     the plan cache: written, read, replanned when the object changes, a cut or
            tampered cache file replaced with one line, none with VIGIL_CACHE_DIR empty
  general_regs  the jump path's recorder (src/runtime/usdt_record.c, USDT_RECORD_OBJ) uses
            no vector or x87 register and calls nothing outside its object, so the
            trampoline may skip XSAVE/XRSTOR (docs/usdt.md, "The jump path"); the
            trampolines' common entry begins with endbr64
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(os.environ.get("VIGIL_BIN", "build/bin"))
SRC = os.path.abspath(os.environ.get("VIGIL_SRC", "."))
VIGIL = os.path.join(BIN, "vigil")
SUBJECT = os.path.join(SRC, "tests", "usdt", "sdt_subject.c")
N = 5


def run(cmd, check=True, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)
    if check and r.returncode:
        raise AssertionError("%s exited %d:\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                      r.stderr[-3000:]))
    return r


def builds(tmp):
    """The subject compiled the ways compilers place probe operands differently."""
    out = {}
    variants = [("gcc-O0", "gcc", ["-O0"]), ("gcc-O2", "gcc", ["-O2"]),
                ("gcc-O2-nopie", "gcc", ["-O2", "-no-pie", "-fno-pic"])]
    if shutil.which("clang"):
        variants += [("clang-O0", "clang", ["-O0"]), ("clang-O2", "clang", ["-O2"])]
    else:
        print("note: clang is not installed (tests/deps: deps.clang); gcc builds only")
    for name, cc, flags in variants:
        exe = os.path.join(tmp, "sdt_" + name)
        run([cc] + flags + ["-g", "-o", exe, SUBJECT])
        out[name] = exe
    return out


def usdt_list(target, check=True):
    r = run([VIGIL, "usdt", "list", "--format", "json", target], check=check)
    return json.loads(r.stdout) if r.stdout.strip() else None, r


def readelf_count(path):
    r = run(["readelf", "-n", path])
    return len(re.findall(r"^\s+Provider:", r.stdout, re.M))


def postgres_bin():
    """Debian's newest PostgreSQL server binary, found as tests/logmodel.cmake does."""
    root = "/usr/lib/postgresql"
    best = None
    if os.path.isdir(root):
        for v in sorted(os.listdir(root), key=lambda s: int(s) if s.isdigit() else 0):
            p = os.path.join(root, v, "bin", "postgres")
            if os.path.exists(p):
                best = p
    return best


def libc_path():
    r = run(["ldd", "/bin/true"])
    m = re.search(r"libc\.so\.6 => (\S+)", r.stdout)
    assert m, r.stdout
    return m.group(1)


def check_list(tmp):
    exes = builds(tmp)
    kinds_seen = set()
    for name, exe in exes.items():
        doc, _ = usdt_list(exe)
        probes = {p["name"]: p for p in doc["objects"][0]["probes"]}
        assert set(probes) == {"ints", "consts", "globals", "fields", "statics", "regs", "sema",
                               "work__start", "work__done", "joined", "hot"}, (name, sorted(probes))
        assert doc["count"] == readelf_count(exe) == 11, (name, doc["count"])
        for p in probes.values():
            assert p["provider"] == "vt" and p["semaphore"].startswith("0x"), p
            assert "error" not in p, (name, p)
            for a in p["args"]:
                kinds_seen.add((a["kind"], "index" in a, "address" in a))
        sizes = [(a["size"], a["signed"]) for a in probes["ints"]["args"]]
        assert sizes == [(1, True), (1, False), (2, True), (2, False), (4, True), (4, False),
                         (8, True), (8, False)], (name, sizes)
        assert [a["value"] for a in probes["consts"]["args"]] == [42, -42, -1], name
        regs = probes["regs"]["args"]
        assert [(a.get("register"), a.get("register_bytes"), a.get("register_shift", 0))
                for a in regs[:8]] == [("rax", 8, 0), ("rax", 4, 0), ("rax", 2, 0), ("rax", 1, 8),
                                       ("rax", 1, 0), ("r9", 4, 0), ("r10", 2, 0), ("r11", 1, 0)]
        assert (regs[8]["base"], regs[8]["index"], regs[8]["scale"]) == ("rdx", "rcx", 8), regs[8]
        assert (regs[9]["base"], regs[9]["offset"]) == ("rsi", -16), regs[9]
    # every operand kind the compilers emitted: registers, memory from a base register,
    # memory with an index, symbols (rip-relative at -O2), constants
    for k in [("register", False, False), ("memory", False, False), ("memory", True, False),
              ("memory", False, True), ("constant", False, False)]:
        assert k in kinds_seen, (k, kinds_seen)
    # a stripped copy keeps its notes; the static variable's operand is no longer resolved
    stripped = os.path.join(tmp, "sdt_stripped")
    shutil.copy(exes["gcc-O2"], stripped)
    run(["strip", "-s", stripped])
    doc, _ = usdt_list(stripped)
    probes = {p["name"]: p for p in doc["objects"][0]["probes"]}
    assert len(probes) == 11, probes
    assert "symbol not in the file's symbol tables" in probes["statics"]["error"], probes["statics"]
    text = run([VIGIL, "usdt", "list", stripped])
    assert "! argument 1 (-4@g_i32(%rip))" in text.stdout, text.stdout
    # Debian's PostgreSQL: every site readelf sees, each argument understood
    pg = postgres_bin()
    assert pg, "Debian's PostgreSQL server is not installed (tests/deps: deps.postgresql)"
    doc, _ = usdt_list(pg)
    assert doc["count"] == readelf_count(pg) and doc["count"] >= 70, doc["count"]
    names = {p["name"] for p in doc["objects"][0]["probes"]}
    assert {"transaction__commit", "lock__wait__start", "buffer__read__done"} <= names
    assert not [p for p in doc["objects"][0]["probes"] if "error" in p]
    print("postgres: %d sites, every argument understood" % doc["count"])
    # libc, where ldd finds it: as many sites as readelf -n shows (Debian's has none)
    libc = libc_path()
    doc, r = usdt_list(libc)
    assert doc["count"] == readelf_count(libc), (doc["count"], readelf_count(libc))
    if doc["count"] == 0:
        assert "no SDT probes (no .note.stapsdt section)" in r.stderr, r.stderr
    print("libc %s: %d sites" % (libc, doc["count"]))
    # a process: its executable's probes at their run-time addresses
    p = subprocess.Popen([exes["gcc-O2"], "1000000"], stdout=subprocess.DEVNULL,
                         env=dict(os.environ, SDT_PACE_US="1000"))  # runs until killed
    try:
        doc = None
        deadline = time.time() + 60
        while time.time() < deadline:  # until the loader has mapped it
            doc, _ = usdt_list(str(p.pid))
            if doc and any(o["path"] == exes["gcc-O2"] for o in doc["objects"]):
                break
            time.sleep(0.05)
        obj = [o for o in doc["objects"] if o["path"] == exes["gcc-O2"]][0]
        for pr in obj["probes"]:
            assert int(pr["address"], 16) == int(pr["pc"], 16) + int(obj["bias"], 16)
            assert pr["semaphore_value"] == 0 and not pr["armed"], pr  # no tool armed it
    finally:
        p.kill()
        p.wait()
    # bad input: one line, exit 1; no notes: said, exit 0
    junk = os.path.join(tmp, "junk")
    with open(junk, "w") as f:
        f.write("not an ELF file\n")
    _, r = usdt_list(junk, check=False)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "not an ELF file" in r.stderr, r
    cut = os.path.join(tmp, "cut")
    with open(exes["gcc-O2"], "rb") as f, open(cut, "wb") as g:
        g.write(f.read()[:3000])
    _, r = usdt_list(cut, check=False)
    assert r.returncode == 1 and "truncated" in r.stderr, r.stderr
    _, r = usdt_list("/bin/true")
    assert "no SDT probes" in r.stderr, r.stderr
    _, r = usdt_list(tmp, check=False)
    assert r.returncode == 1 and "not a regular file" in r.stderr, r.stderr


def events(trace, prefix="vt."):
    r = run([VIGIL, "dump", "--json", trace])
    out = []
    for line in r.stdout.splitlines():
        e = json.loads(line)
        if e["name"].startswith(prefix):
            f = e["fields"]
            args = sorted((int(k[3:]), int(v)) for k, v in f.items() if k.startswith("arg"))
            out.append((e["name"], [v for _, v in args], e["pid"]))
    return out


def printed(stdout):
    out = []
    for line in stdout.splitlines():
        if line.startswith("vt."):
            w = line.split()
            out.append((w[0], [int(x) for x in w[1:]]))
    return out


def own_lines(stderr):
    """What vigil said on stderr, without the runtime's note that the clock mapping it was
    given could not be used here (a busy machine: it calibrates again, nothing is lost)."""
    return [ln for ln in stderr.splitlines() if "is not a usable clock mapping" not in ln]


def refusal(stderr):
    """The one line saying vt:joined stays on the int3 path: a branch lands inside the
    bytes a jump would displace (docs/usdt.md, "The jump path")."""
    lines = own_lines(stderr)
    assert len(lines) == 1 and "usdt vt:joined at " in lines[0] and \
        "a branch or jump table may land at" in lines[0] and \
        "it stays on the int3 path" in lines[0], stderr


def check_record(tmp):
    for name, exe in builds(tmp).items():
        for path in ("int3", "jump"):
            trace = os.path.join(tmp, "t-%s-%s" % (name, path))
            opt = ["--usdt-int3"] if path == "int3" else []
            env = dict(os.environ, VIGIL_VERBOSE="1")
            r = run([VIGIL, "record", "-q", "-o", trace, "--usdt", "vt:*"] + opt +
                    ["--", exe, str(N)], env=env)
            said = [ln for ln in own_lines(r.stderr) if "matching sites armed" in ln]
            # 11 sites (vt:hot's too); on the jump path all but vt:joined's
            assert len(said) == 1 and said[0].endswith(
                "usdt: 11 of 11 matching sites armed, %d on the jump path" %
                (0 if path == "int3" else 10)), r.stderr
            rest = "\n".join(ln for ln in r.stderr.splitlines() if ln not in said)
            if path == "jump":
                refusal(rest)
            else:
                assert own_lines(rest) == [], r.stderr
            want = printed(r.stdout)
            got = [(n, v) for n, v, _ in events(trace)]
            assert len(want) == 14 * N and "vt.sema" in {n for n, _ in want}, want
            assert got == want, "%s %s:\n got %s\nwant %s" % (name, path, got[:8], want[:8])
            check_intervals(trace, 3 * N)
            print("%s, %s path: %d events, every value as printed" % (name, path, len(got)))
        # only ints armed: vt:sema's semaphore stays 0, so its guarded site never runs
        trace = os.path.join(tmp, "u-" + name)
        r = run([VIGIL, "record", "-q", "-o", trace, "--usdt", "vt:ints", "--", exe, str(N)])
        assert "vt.sema" not in r.stdout, r.stdout
        assert [n for n, _, _ in events(trace)] == ["vt.ints"] * N
    # the relations are in the metadata: vigil relations and babeltrace2 see them
    r = run([VIGIL, "relations", trace])
    assert "vt.ints" in r.stdout, r.stdout
    if shutil.which("babeltrace2"):
        r = run(["babeltrace2", trace])
        assert r.stdout.count("vt.ints") == N, r.stdout[-2000:]
    r = run([VIGIL, "check", trace])


def check_intervals(trace, n):
    """vt.work__start/vt.work__done: each done's vg_since is the time of the same thread's
    innermost open start, and vt.work is an interval relation of n closed tuples."""
    stacks = {}
    closed = 0
    for line in run([VIGIL, "dump", "--json", trace]).stdout.splitlines():
        e = json.loads(line)
        if e["name"] == "vt.work__start":
            stacks.setdefault(e["tid"], []).append(e["clock"])
        elif e["name"] == "vt.work__done":
            assert int(e["fields"]["vg_since"]) == stacks[e["tid"]].pop(), e
            closed += 1
    assert closed == n and not any(stacks.values()), (closed, stacks)
    r = run([VIGIL, "relations", trace])
    m = re.search(r"^vt\.work\s+interval\s+(\d+) tuples, 0 open", r.stdout, re.M)
    assert m and int(m.group(1)) == n, r.stdout


def site_offset(exe, probe):
    """File offset of a probe's site in exe (its PT_LOAD's offset + pc - vaddr)."""
    doc, _ = usdt_list(exe)
    pc = int([p for p in doc["objects"][0]["probes"] if p["name"] == probe][0]["pc"], 16)
    r = run(["readelf", "-lW", exe])
    for line in r.stdout.splitlines():
        w = line.split()
        if w and w[0] == "LOAD":
            off, vaddr, memsz = int(w[1], 16), int(w[2], 16), int(w[5], 16)
            if vaddr <= pc < vaddr + memsz:
                return off + pc - vaddr
    raise AssertionError("no segment holds %x" % pc)


def check_bad(tmp):
    exe = builds(tmp)["gcc-O2"]
    # stripped: vt:statics' operands name symbols that are gone
    stripped = os.path.join(tmp, "stripped")
    shutil.copy(exe, stripped)
    run(["strip", "-s", stripped])
    trace = os.path.join(tmp, "t-stripped")
    r = run([VIGIL, "record", "-q", "-o", trace, "--usdt", "vt:*", "--", stripped, str(N)])
    lines = [ln for ln in r.stderr.splitlines() if "usdt:" in ln]
    assert len(lines) == 1 and "vt:statics" in lines[0] and "left untouched" in lines[0] and \
        "symbol not in the file's symbol tables" in lines[0], r.stderr
    want = [w for w in printed(r.stdout) if w[0] != "vt.statics"]
    assert [(n, v) for n, v, _ in events(trace)] == want
    # already patched by another tool: an int3 over vt:consts' nop. The program handles
    # SIGTRAP itself (--trap): the foreign int3 and its own raise() reach its handler.
    patched = os.path.join(tmp, "patched")
    shutil.copy(exe, patched)
    off = site_offset(patched, "consts")
    with open(patched, "r+b") as f:
        f.seek(off)
        assert f.read(1) == b"\x90"
        f.seek(off)
        f.write(b"\xcc")
    trace = os.path.join(tmp, "t-patched")
    r = run([VIGIL, "record", "-q", "-o", trace, "--usdt", "vt:*", "--", patched, str(N),
             "--trap"])
    lines = [ln for ln in r.stderr.splitlines() if "usdt:" in ln]
    assert len(lines) == 1 and "vt:consts" in lines[0] and "byte 0xcc" in lines[0] and \
        "left untouched" in lines[0], r.stderr
    assert "traps %d" % (2 * N) in r.stdout, r.stdout  # N raise() + N foreign int3
    want = [w for w in printed(r.stdout) if w[0] != "vt.consts"]
    assert [(n, v) for n, v, _ in events(trace)] == want
    # a bad pattern: one line, exit 2
    r = run([VIGIL, "record", "-q", "-o", os.path.join(tmp, "x"), "--usdt", "nocolon", "--",
             "/bin/true"], check=False)
    assert r.returncode == 2 and "expected PROVIDER:PROBE" in r.stderr, r.stderr
    # vigil usdt plan on what is not an ELF file: one line, exit 1; the patched site has
    # no plan (one line), the stripped file's sites have theirs
    notelf = os.path.join(tmp, "notelf")
    with open(notelf, "w") as f:
        f.write("#!/bin/sh\n")
    for bad, why in (("/dev/null", "not a regular file"), (notelf, "not an ELF file"),
                     (os.path.join(tmp, "missing"), "No such file")):
        r = run([VIGIL, "usdt", "plan", bad, "vt:*"], check=False)
        assert r.returncode == 1 and r.stderr.count("\n") == 1 and why in r.stderr, r.stderr
    r = run([VIGIL, "usdt", "plan", patched, "vt:consts"])
    assert r.stdout == "" and "usdt vt:consts at" in r.stderr and \
        "the site is not a nop" in r.stderr, r.stderr
    # an endbr64 right after the nop (where an indirect branch may land, IBT): refused
    src = os.path.join(tmp, "endbr.c")
    with open(src, "w") as f:
        f.write('#include <sys/sdt.h>\nint main(void)\n{\n\tDTRACE_PROBE(ct, endbr);\n'
                '\t__asm__ volatile("endbr64; nop; nop; nop; nop");\n\treturn 0;\n}\n')
    endbr = os.path.join(tmp, "endbr")
    run(["gcc", "-O2", "-o", endbr, src])
    r = run([VIGIL, "usdt", "plan", endbr, "ct:*"])
    assert r.stdout == "" and "usdt ct:endbr at" in r.stderr and \
        "an endbr64 follows the nop (an indirect branch may land there)" in r.stderr, r.stderr
    print("stripped and patched sites left untouched, one line each; SIGTRAP chained; "
          "a site before an endbr64 refused")


def pg_server():
    """A throw-away server of Debian's newest PostgreSQL (tests/logmodel/pgharness.py)."""
    sys.path.insert(0, os.path.join(SRC, "tests", "logmodel"))
    import pgharness
    pg_bin = os.path.dirname(postgres_bin() or "/nonexistent/postgres")
    if not os.path.exists(os.path.join(pg_bin, "pgbench")):
        raise AssertionError("Debian's PostgreSQL is not installed (tests/deps: deps.postgresql)")
    return pgharness.PgServer(pg_bin, BIN)


def check_postgres(tmp):
    """Stock PostgreSQL under pgbench, --usdt 'postgresql:transaction__*'. Every client
    session (a backend named 'postgres: USER DB [local] ...') commits one transaction at
    its start (InitPostgres reads the catalogs to authenticate and open the database),
    then one per transaction its client runs: the pgbench backends' commits are pgbench's
    transactions plus one each, the psql backend's its one statement plus one. Other
    processes (postmaster, logical replication launcher) commit their own, counted apart."""
    pg = pg_server()
    clients, per_client = 2, 40
    try:
        pg.initdb({"fsync": "off", "autovacuum": "off"})
        trace = pg.path("trace")
        cache = {"VIGIL_CACHE_DIR": pg.path("cache")}  # the server's user writes there
        pg.start(record=trace, env=cache, record_args=["--usdt", "postgresql:transaction__*"])
        psql_pid = int(pg.psql("select pg_backend_pid()").stdout.strip())
        script = pg.path("one.sql")
        with open(script, "w") as f:
            f.write("select 1;\n")
        os.chmod(script, 0o644)
        out = pg.pgbench(["-n", "-c", str(clients), "-t", str(per_client), "-f", script])
        m = re.search(r"number of transactions actually processed: (\d+)/", out)
        assert m, out
        done = int(m.group(1))
        assert done == clients * per_client, out
        pg.stop()
        names, commits, starts = {}, {}, {}
        for line in run([VIGIL, "dump", "--json", trace]).stdout.splitlines():
            e = json.loads(line)
            if e["name"] == "vg.process.name":
                names[e["pid"]] = e["fields"]["name"]
            elif e["name"] == "postgresql.transaction__commit":
                commits[e["pid"]] = commits.get(e["pid"], 0) + 1
            elif e["name"] == "postgresql.transaction__start":
                starts[e["pid"]] = starts.get(e["pid"], 0) + 1
        assert commits == starts, (commits, starts)  # nothing aborted
        client = {p for p in commits if re.match(r"postgres: \S+ \S+ \[local\]", names.get(p, ""))}
        assert psql_pid in client and commits[psql_pid] == 1 + 1, (psql_pid, commits, names)
        bench = [p for p in client if commits[p] > 2]
        assert len(bench) == clients and all(commits[p] == per_client + 1 for p in bench), \
            {p: (commits[p], names.get(p)) for p in commits}
        in_clients = sum(commits[p] for p in client)
        # every session's start, pgbench's transactions, psql's statement
        assert in_clients == len(client) + done + 1, (in_clients, len(client), done)
        others = {names.get(p, "postmaster"): commits[p] for p in commits if p not in client}
        print("pgbench: %d transactions; transaction__commit: %d in %d client sessions "
              "(%d + one at each session's start + psql's 1), %d in other processes %s" %
              (done, in_clients, len(client), done, sum(others.values()), others))
        r = run([VIGIL, "check", trace])
        check_postgres_shadow_stack(pg, cache)
    finally:
        pg.cleanup()


def check_postgres_shadow_stack(pg, cache):
    """Under a shadow stack (CET; VIGIL_USDT_ASSUME_SHSTK=1 stands for one, which this
    machine's kernel does not give), a site whose displaced bytes end in a call (PostgreSQL's
    buffer__checkpoint__start: the trampoline would push the return address itself) stays
    on the int3 path with one line, and is still recorded."""
    for assume in ("1", "0"):
        trace = pg.path("trace-shstk-" + assume)
        out = "server-shstk-%s.out" % assume
        pg.start(record=trace, env=dict(cache, VIGIL_USDT_ASSUME_SHSTK=assume), out=out,
                 record_args=["--usdt", "postgresql:buffer__checkpoint__start"])
        pg.psql("checkpoint")
        pg.stop()
        said = [ln for ln in open(pg.path(out)) if "shadow stack" in ln]
        if assume == "1":
            assert len(said) == 1 and "stay on the int3 path" in said[0], said
        else:
            assert said == [], said
        n = sum(1 for line in run([VIGIL, "dump", "--json", trace]).stdout.splitlines()
                if '"postgresql.buffer__checkpoint__start"' in line)
        assert n >= 2, n  # ours and the shutdown's
    print("shadow stack: buffer__checkpoint__start refused to the int3 path with one line, "
          "still recorded")


def bufferpool_run(tmp, name, shared_buffers, transactions):
    """pgbench's default (TPC-B like) workload on a scale-1 database (about 16 MB, 2 000
    blocks) against a server with SHARED_BUFFERS, the server recorded with --usdt
    'postgresql:buffer__*' from a cold start (the database is initialised first by an
    unrecorded server). Returns (TMP/NAME.vgm, reads, misses): buffer__read__done's last
    argument is `found`, 0 for a read that missed the pool."""
    pg = pg_server()
    try:
        pg.initdb({"fsync": "off", "autovacuum": "off", "shared_buffers": shared_buffers})
        pg.start()
        r = subprocess.run(pg.client("pgbench") + ["-i", "-q", "-s", "1", "postgres"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        pg.stop()
        trace = pg.path("trace")
        pg.start(record=trace, record_args=["--usdt", "postgresql:buffer__*"])
        clients = 2
        out = pg.pgbench(["-n", "-c", str(clients), "-t", str(transactions // clients)])
        m = re.search(r"number of transactions actually processed: (\d+)/", out)
        assert m and int(m.group(1)) == transactions, out
        pg.stop()
        reads = misses = 0
        for line in run([VIGIL, "dump", "--json", trace]).stdout.splitlines():
            e = json.loads(line)
            if e["name"] == "postgresql.buffer__read__done":
                f = e["fields"]
                found = max(f, key=lambda k: int(k[3:]) if k.startswith("arg") else 0)
                reads += 1
                misses += int(f[found]) == 0
        # The recording also holds the server's log models (its stderr): --from-trace
        # models the probe events instead.
        model = os.path.join(tmp, name + ".vgm")
        run([VIGIL, "model", "--from-trace", trace, "-o", model])
        return model, reads, misses
    finally:
        pg.cleanup()


def check_bufferpool(tmp):
    """The buffer-pool scenario of the behaviour-model paper (seed 003, section 5): the
    same workload with a pool far too small and an ample one. With 16 buffers nearly
    every read misses and must evict a buffer, often a dirty one it writes first
    (buffer__write__dirty__*, which the ample pool never needs): the paper's criterion is
    an event indicative of the change in the top 3 of the relevant report."""
    transactions = 400
    ample, reads_a, misses_a = bufferpool_run(tmp, "ample", "128MB", transactions)
    small, reads_s, misses_s = bufferpool_run(tmp, "small", "128kB", transactions)
    print("buffer__read__done: ample pool %d reads, %d missed; 16 buffers %d reads, %d missed"
          % (reads_a, misses_a, reads_s, misses_s))
    # The same workload reads about as many blocks; the small pool misses far more often
    # (about 2.4 times: the ample pool's misses are its cold start, the small pool keeps
    # the hottest blocks, the branches, tellers and index roots).
    assert reads_a > transactions and reads_s > transactions, (reads_a, reads_s)
    assert misses_s > 1.5 * misses_a, (misses_a, misses_s)
    d = json.loads(run([VIGIL, "diff", "--format", "json", ample, small]).stdout)
    miss = ("buffer__write__dirty__start", "buffer__write__dirty__done",
            "buffer__read__start", "buffer__read__done")

    def probe(ev):  # a recorded sensor's site is sensor:NAME (docs/model.md)
        site = ev["site"]
        return site[len("sensor:postgresql."):] if site.startswith("sensor:postgresql.") else site

    events = [(x["rank"], probe(x["event"]), x["count_baseline"], x["count_other"])
              for x in d["events"]]
    hits = [x for x in events if x[0] <= 3 and x[1] in miss]
    assert hits, events[:5]
    trans = [(x["rank"], probe(x["from"]), probe(x["to"])) for x in d["transitions"]]
    # a read that had to evict a dirty buffer first: the small pool's misses
    read_evicts = [x for x in trans if x[0] <= 3 and x[1] == "buffer__read__start"
                   and x[2] == "buffer__write__dirty__start"]
    assert read_evicts, trans[:5]
    print("vigil diff, event proportions: %s" % "; ".join(
        "#%d %s (%d -> %d)" % x for x in events[:3]))
    print("vigil diff, transition probabilities: %s" % "; ".join(
        "#%d %s -> %s" % x for x in trans[:3]))


def check_dlopen(tmp):
    """A library loaded by dlopen after start, found through its caller's RUNPATH
    ($ORIGIN/lib: vigil does not interpose dlopen, so glibc still resolves it from the
    caller): its site is armed when the loader says it was mapped (r_brk), for a
    pattern given at start and for one given at run time by vigil probes."""
    os.makedirs(os.path.join(tmp, "lib"))
    run(["gcc", "-O2", "-shared", "-fPIC", "-o", os.path.join(tmp, "lib", "libsdtlib.so"),
         os.path.join(SRC, "tests", "usdt", "sdt_lib.c")])
    exe = os.path.join(tmp, "sdt_dlopen")
    run(["gcc", "-O2", "-o", exe, os.path.join(SRC, "tests", "usdt", "sdt_dlopen.c"),
         "-Wl,-rpath,$ORIGIN/lib", "-Wl,--enable-new-dtags"])
    trace = os.path.join(tmp, "t")
    r = run([VIGIL, "record", "-q", "-o", trace, "--usdt", "vl:*", "--", exe, str(N)])
    assert own_lines(r.stderr) == [], r.stderr
    want = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("vl.")]
    want = [(w[0], [int(x) for x in w[1:]]) for w in want]
    assert len(want) == N
    assert [(n, v) for n, v, _ in events(trace, "vl.")] == want
    run([VIGIL, "check", trace])
    # a pattern that names nothing loaded: the program is unharmed (RUNPATH still works)
    r = run([VIGIL, "record", "-q", "-o", os.path.join(tmp, "u"), "--usdt", "nothing:*", "--",
             exe, str(N)])
    assert len([ln for ln in r.stdout.splitlines() if ln.startswith("vl.")]) == N
    # the library's site takes the jump path: the runtime had it planned (vigil usdt plan)
    lib = os.path.join(tmp, "lib", "libsdtlib.so")
    wait_jump([VIGIL, "record", "-q", "-o", os.path.join(tmp, "w"), "--usdt", "vl:*", "--",
               exe, str(N), "wait"], lib, ["call"])
    print("dlopen: %d events from a library loaded through RUNPATH after start, its site "
          "on the jump path" % N)
    check_dlopen_python(tmp)


def wait_jump(cmd, lib, probes):
    """Runs cmd (vigil record ... -- PROGRAM ... wait) until the program says ready, then
    checks that each probe of lib is armed on the jump path, and lets the program end."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        lines = []
        read_until(p, lines, lambda ls: "ready\n" in ls, "the program's ready")
        pid = int(open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split()[0])
        for probe in probes:
            assert site_state(pid, lib, probe) == (True, "jump"), (probe, site_state(
                pid, lib, probe))
        p.stdin.write("\n")
        p.stdin.flush()
        p.communicate(timeout=120)
        assert p.returncode == 0, p.returncode
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return lines


def check_dlopen_python(tmp):
    """Debian's libpython (SDT probes python:*) loaded by dlopen after start: its sites
    are planned when it is mapped (the jump path), and python:function__entry/return of a
    Python function defined on line 7777 and called N times from C (map) count N each."""
    libs = sorted(glob.glob("/usr/lib/x86_64-linux-gnu/libpython3*.so.1.0"))
    assert libs, "no libpython3*.so.1.0 (Debian: libpython3-dev, make deps)"
    lib = libs[-1]
    exe = os.path.join(tmp, "sdt_pyload")
    run(["gcc", "-O2", "-o", exe, os.path.join(SRC, "tests", "usdt", "sdt_pyload.c")])
    # the plans into the test's cache first: planning this large a library on a loaded
    # machine may take longer than the runtime waits for its planner (60 s)
    r = run([VIGIL, "usdt", "plan", lib, "python:function__*"])
    assert len(r.stdout.split()) == 2, r.stdout + r.stderr
    trace = os.path.join(tmp, "py")
    r = run([VIGIL, "record", "-q", "-o", trace, "--usdt", "python:*", "--", exe, lib, str(N)])
    assert ("calls %d" % N) in r.stdout and own_lines(r.stderr) == [], r.stdout + r.stderr
    got = {}
    for name, values, _ in events(trace, "python."):
        if name in ("python.function__entry", "python.function__return") and \
                values[2] in (7777, 7778):
            got[(name, values[2])] = got.get((name, values[2]), 0) + 1
    assert got == {("python.function__entry", 7777): N,
                   ("python.function__return", 7778): N}, got
    run([VIGIL, "check", trace])
    wait_jump([VIGIL, "record", "-q", "-o", os.path.join(tmp, "pyw"), "--usdt", "python:*",
               "--", exe, lib, str(N), "wait"], lib, ["function__entry", "function__return"])
    print("dlopen: %s's function__entry/return %d times each, on the jump path" % (
        os.path.basename(lib), N))


def check_linked(tmp):
    """The subject linked with libvigil (the sanitizer build's runtime), armed through
    VIGIL_USDT at start: the same values as through the preload, on the int3 path, with
    the CLI's plans, and with the plans of the planner the runtime runs itself."""
    exe = os.environ["USDT_LINKED"]
    # the jump path's plans, as vigil record hands them over (VIGIL_USDT_PLAN)
    r = run([VIGIL, "usdt", "plan", exe, "vt:*"])
    plans = r.stdout.split()
    refusal(r.stderr.replace("vigil usdt: %s: 10 sites planned for the jump path\n" % exe, ""))
    assert len(plans) == 10, r.stdout
    # int3: no plans; jump: the CLI's plans; planner: the runtime asks vigil usdt plan
    for path, plan in (("int3", None), ("jump", ";".join(plans)), ("planner", None)):
        trace = os.path.join(tmp, "t-" + path)
        env = dict(os.environ, VIGIL_OUT=trace, VIGIL_USDT="vt:*", VIGIL_VERBOSE="1")
        if plan:
            env["VIGIL_USDT_PLAN"] = plan
        if path == "planner":
            env["VIGIL_USDT_PLANNER"] = VIGIL
        r = run([exe, str(N), "--trap"], env=env)
        said = [ln for ln in own_lines(r.stderr) if "usdt" in ln]
        asked = [ln for ln in said if "from the planner" in ln]
        said = [ln for ln in said if ln not in asked]
        assert len(said) == 1 and said[0].endswith(
            "usdt: 11 of 11 matching sites armed, %d on the jump path" %
            (0 if path == "int3" else 10)), r.stderr
        assert len(asked) == (path == "planner"), r.stderr
        assert "traps %d" % N in r.stdout, r.stdout
        want = printed(r.stdout)
        assert len(want) == 14 * N
        assert [(n, v) for n, v, _ in events(trace)] == want
        check_intervals(trace, 3 * N)
        run([VIGIL, "check", trace])
        print("linked, %s path: %d events, every value as printed" % (path, len(want)))


def read_until(proc, lines, pred, what):
    """Reads proc's stdout lines into `lines` until pred(lines) (60 s at most)."""
    deadline = time.time() + 60
    while not pred(lines):
        if time.time() > deadline or proc.poll() is not None:
            raise AssertionError("waiting for %s: %d lines read, exit %s" %
                                 (what, len(lines), proc.poll()))
        line = proc.stdout.readline()
        if line:
            lines.append(line)


def probes_switch(pid, verb, pattern):
    r = run([VIGIL, "probes", "--pid", str(pid), "--json", verb, pattern])
    return json.loads(r.stdout)


def check_probes(tmp):
    """A probe window: vt:ints and vt:sema armed at run time by vigil probes, disarmed
    later; their events fall inside the window, the semaphore of vt:sema gates the
    program's own guarded code only while armed."""
    exe = builds(tmp)["gcc-O2"]
    trace = os.path.join(tmp, "t")
    env = dict(os.environ, SDT_PACE_US="2000")
    rec = subprocess.Popen([VIGIL, "record", "-q", "--listen", "-o", trace, "--", exe,
                            "100000000"], stdout=subprocess.PIPE, text=True, env=env)
    lines = []
    try:
        read_until(rec, lines, lambda ls: len(ls) >= 30, "the first rounds")
        on = [probes_switch(rec.pid, "enable", "usdt:vt:ints"),
              probes_switch(rec.pid, "enable", "usdt:vt:sema")]
        assert [o["sites"] for o in on] == [1, 1], on
        again = probes_switch(rec.pid, "enable", "usdt:vt:ints")
        assert again["sites"] == 0, again  # already armed
        # vigil usdt list PID sees the breakpoints and the raised semaphores
        kids = open("/proc/%d/task/%d/children" % (rec.pid, rec.pid)).read().split()
        doc, _ = usdt_list(kids[0])
        obj = [o for o in doc["objects"] if o["path"] == exe][0]
        state = {p["name"]: (p["armed"], p["semaphore_value"], p.get("entry"))
                 for p in obj["probes"]}
        assert state["ints"] == (True, 1, "jump") and state["sema"] == (True, 1, "jump") and \
            state["regs"] == (False, 0, None), state
        n0 = len(lines)
        read_until(rec, lines, lambda ls: sum(1 for x in ls[n0:] if x.startswith("vt.sema")) >= 20,
                   "rounds with vt:sema armed")
        off = [probes_switch(rec.pid, "disable", "usdt:vt:*")]
        assert off[0]["sites"] == 2, off
        n1 = len(lines)
        read_until(rec, lines, lambda ls: len(ls) >= n1 + 60, "rounds after the window")
        # the subject's pid: vigil record's only child
        kids = open("/proc/%d/task/%d/children" % (rec.pid, rec.pid)).read().split()
        os.kill(int(kids[0]), signal.SIGUSR1)
        # read() through the same buffered reader (communicate with a timeout reads the
        # descriptor directly and would skip what readline() buffered); EOF comes at exit
        lines += rec.stdout.read().splitlines(True)
        rec.wait(timeout=120)
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    assert rec.returncode == 0, rec.returncode
    start, end = on[0]["since_ns"], off[0]["at_ns"]
    r = run([VIGIL, "dump", "--json", trace])
    evs = [json.loads(x) for x in r.stdout.splitlines()]
    ints = [e for e in evs if e["name"] == "vt.ints"]
    sema = [e for e in evs if e["name"] == "vt.sema"]
    assert len(ints) >= 20 and len(sema) >= 20, (len(ints), len(sema))
    assert all(start <= e["clock"] <= end for e in ints + sema), (start, end)
    assert not [e for e in evs if e["name"].startswith("vt.") and e["name"] not in
                ("vt.ints", "vt.sema")]
    printed_sema = sum(1 for x in lines if x.startswith("vt.sema"))
    # the guarded code ran only while the semaphore was raised: each such round hit the
    # armed site, except one that may have passed the check just before the disarm
    assert len(sema) <= printed_sema <= len(sema) + 1, (len(sema), printed_sema)
    run([VIGIL, "check", trace])
    if shutil.which("babeltrace2"):
        r = run(["babeltrace2", trace])
        assert r.stdout.count("vt.ints") == len(ints), r.stdout[-1000:]
    print("probe window: %d vt.ints, %d vt.sema events, all inside it; %d rounds in all" %
          (len(ints), len(sema), sum(1 for x in lines if x.startswith("vt.ints"))))


def check_threads(tmp):
    """Sites switched on and off over and over while two threads run through vt:hot as fast
    as they can (so some are stopped inside the bytes the jump displaces), and a third
    blocks every signal most of the time (SDT_MASKER: the sweep waits for it, each site
    still takes the jump): the program runs on, and each thread's recorded counts rise by
    one within each window, as it counted them."""
    exe = builds(tmp)["gcc-O2"]
    trace = os.path.join(tmp, "t")
    env = dict(os.environ, SDT_PACE_US="1000", SDT_HOT="2", SDT_MASKER="1")
    rec = subprocess.Popen([VIGIL, "record", "-q", "--listen", "-o", trace, "--", exe,
                            "100000000"], stdout=subprocess.PIPE, text=True, env=env)
    lines = []
    rounds = 12
    try:
        read_until(rec, lines, lambda ls: len(ls) >= 30, "the first rounds")
        kids = open("/proc/%d/task/%d/children" % (rec.pid, rec.pid)).read().split()
        for _ in range(rounds):
            assert probes_switch(rec.pid, "enable", "usdt:vt:hot")["sites"] == 1
            doc, _ = usdt_list(kids[0])
            obj = [o for o in doc["objects"] if o["path"] == exe][0]
            hot = [p for p in obj["probes"] if p["name"] == "hot"][0]
            assert hot.get("entry") == "jump", hot
            assert probes_switch(rec.pid, "disable", "usdt:vt:hot")["sites"] == 1
        os.kill(int(kids[0]), signal.SIGUSR1)
        lines += rec.stdout.read().splitlines(True)
        rec.wait(timeout=120)
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    assert rec.returncode == 0, rec.returncode
    final = {int(w[1]): int(w[2]) for w in (x.split() for x in lines) if w[0] == "vt.hot"}
    assert sorted(final) == [0, 1], final
    r = run([VIGIL, "dump", "--json", "--name", "vt.hot", trace])
    per = {}
    for x in r.stdout.splitlines():
        e = json.loads(x)
        per.setdefault(e["tid"], []).append((int(e["fields"]["arg1"]), int(e["fields"]["arg2"])))
    assert len(per) == 2, per.keys()
    windows = 0
    for tid, evs in per.items():
        k = evs[0][0]
        assert all(a == k for a, _ in evs), tid
        counts = [c for _, c in evs]
        assert counts[-1] < final[k], (counts[-1], final[k])
        # rising by one inside a window; a gap is the time between two windows
        gaps = sum(1 for a, b in zip(counts, counts[1:]) if b != a + 1)
        assert all(b > a for a, b in zip(counts, counts[1:])), tid
        assert gaps <= rounds - 1, gaps
        windows = max(windows, gaps + 1)
    print("%d windows over 2 threads: %s events, counts rising by one in each" %
          (rounds, sum(len(v) for v in per.values())))


def check_model(tmp):
    """A recording with log models (the program's stderr) and USDT events: vigil model
    models the log statements and says, in one hint, that --from-trace models the
    probes; with --from-trace the probes are its event types (docs/model.md)."""
    exe = builds(tmp)["gcc-O2"]
    trace = os.path.join(tmp, "t")
    env = dict(os.environ, SDT_LOG="1")
    run([VIGIL, "record", "-q", "-o", trace, "--usdt", "vt:*", "--", exe, str(N)], env=env)
    r = run([VIGIL, "model", trace, "-o", os.path.join(tmp, "log.vgm")])
    hints = [ln for ln in r.stderr.splitlines() if "hint:" in ln]
    assert len(hints) == 1 and "also recorded 11 sensors (vt." in hints[0] and \
        "`vigil model --from-trace %s` models those events" % trace in hints[0], r.stderr
    with open(os.path.join(tmp, "log.vgm")) as f:
        text = f.read()
    assert "round" in text and "sensor:vt." not in text, text[:2000]
    r = run([VIGIL, "model", "--from-trace", trace, "-o", os.path.join(tmp, "usdt.vgm")])
    assert "hint:" not in r.stderr, r.stderr
    with open(os.path.join(tmp, "usdt.vgm")) as f:
        text = f.read()
    assert "sensor:vt.ints" in text, text[:2000]
    # a recording without sensors of its own gets no hint
    plain = os.path.join(tmp, "p")
    run([VIGIL, "record", "-q", "-o", plain, "--", exe, str(N)], env=env)
    r = run([VIGIL, "model", plain, "-o", os.path.join(tmp, "p.vgm")])
    assert "hint:" not in r.stderr, r.stderr
    print("log models used, one hint naming --from-trace; none without sensors")


def site_state(pid, exe, probe):
    """(armed, entry) of a probe's site in process pid, from vigil usdt list PID."""
    doc, _ = usdt_list(str(pid))
    obj = [o for o in doc["objects"] if o["path"] == exe][0]
    p = [p for p in obj["probes"] if p["name"] == probe][0]
    return p["armed"], p.get("entry")


def wait_state(pid, exe, probe, want, what):
    deadline = time.time() + 60
    while site_state(pid, exe, probe) != want:
        if time.time() > deadline:
            raise AssertionError("%s: %s is %s, not %s" % (what, probe,
                                                          site_state(pid, exe, probe), want))
        time.sleep(0.05)


def check_collector(tmp):
    """vigil probes --collector enable/disable 'usdt:vt:ints': vigild relays it to every
    C subject, and to one that connects later; each arms its site on the jump path (the
    subject's runtime asks the planner, vigil usdt plan, for its own files' plans) and
    disarms it; the collected trace holds vt.ints events and no other probe's."""
    sys.path.insert(0, os.path.join(SRC, "tests", "collector"))
    from vgd import Collector  # noqa: E402
    exe = builds(tmp)["gcc-O2"]
    c = Collector(os.path.join(tmp, "out")).start()
    env = dict(os.environ, SDT_PACE_US="2000")
    subs = []

    def subject():
        p = subprocess.Popen([VIGIL, "record", "-q", "--to", c.addr(), "--", exe, "100000000"],
                             stdout=subprocess.PIPE, text=True, env=env)
        subs.append(p)
        read_until(p, [], lambda ls: len(ls) >= 20, "the subject's first rounds")
        return int(open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split()[0])

    def probes(verb):
        r = run([VIGIL, "probes", "--collector", c.addr(), "--json", verb, "usdt:vt:ints"])
        return json.loads(r.stdout)

    try:
        first = subject()
        on = probes("enable")
        assert on["usdt"] == "vt:ints" and on["subjects"] in (0, 1), on
        wait_state(first, exe, "ints", (True, "jump"), "after enable")
        second = subject()  # connects after the enable: told as it says hello
        wait_state(second, exe, "ints", (True, "jump"), "a subject connecting later")
        assert site_state(first, exe, "regs") == (False, None)
        off = probes("disable")
        assert off["subjects"] == 2, off
        for pid in (first, second):
            wait_state(pid, exe, "ints", (False, None), "after disable")
            os.kill(pid, signal.SIGUSR1)
        for p in subs:
            p.communicate(timeout=120)
            assert p.returncode == 0, p.returncode
    finally:
        for p in subs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert c.stop() == 0
    r = run([VIGIL, "dump", "--json", os.path.join(tmp, "out")])
    names = [json.loads(x)["name"] for x in r.stdout.splitlines()]
    ints = names.count("vt.ints")
    assert ints > 0 and not [n for n in names if n.startswith("vt.") and n != "vt.ints"], ints
    r = run([VIGIL, "probes", "--collector", "127.0.0.1:1", "enable", "usdt:vt:x y"],
            check=False)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    print("through the collector: 2 subjects armed and disarmed, %d vt.ints events" % ints)


def check_general_regs(tmp):
    obj = os.environ["USDT_RECORD_OBJ"]
    dis = run(["objdump", "-d", "--no-show-raw-insn", obj]).stdout
    assert "<vg__usdt_jump_fast>:" in dis, "no vg__usdt_jump_fast in " + obj
    vector = [line.strip() for line in dis.splitlines()
              if re.search(r"%(x|y|z)mm\d|%mm\d|%st\b|%st\(|%k[0-7]\b", line)
              or re.search(r"\t(f[a-z]+|emms|fxsave|xsave|vzeroupper|ldmxcsr|stmxcsr)\b", line)]
    assert not vector, "%s uses vector or x87 registers:\n%s" % (obj, "\n".join(vector[:20]))
    # data it reads (the thread's buffer, the clock, the reporting switch, whether several
    # listeners are set: then the full path records), no function
    allowed = {"_GLOBAL_OFFSET_TABLE_", "vg__tls_abi1", "vg__clock", "vg__report_off", "vg__listening"}
    undefined = set(run(["nm", "-u", "--format=just-symbols", obj]).stdout.split())
    assert undefined <= allowed, "%s refers to %s (a call out of the vector-free recorder?)" % (
        obj, sorted(undefined - allowed))
    # the trampolines call the common entry indirectly: it begins with endbr64 (IBT)
    lib = os.path.join(BIN, "libvigil.so")
    entry = run(["objdump", "-d", "--no-show-raw-insn", "--disassemble=vg__usdt_tramp_entry",
                 lib]).stdout
    first = re.search(r"<vg__usdt_tramp_entry>:\n\s*[0-9a-f]+:\s*(\S+)", entry)
    assert first and first.group(1) == "endbr64", entry[-500:]
    print("general_regs: %s: no vector or x87 register, refers only to %s" % (
        os.path.basename(obj), ", ".join(sorted(undefined))))


def check_cache(tmp):
    """The plan cache (docs/usdt.md, "Plan cache"): vigil usdt plan writes one file per
    object, named by its build-id; a later run reads it (a refusal planted in it is
    obeyed), a changed object (its modification time) is planned again, a cut or tampered
    cache file gives one line and is replaced, VIGIL_CACHE_DIR= (empty) keeps none."""
    exe = os.path.join(tmp, "sdt")
    run(["gcc", "-O2", "-g", "-o", exe, SUBJECT])
    cache = os.path.join(tmp, "plans")
    env = dict(os.environ, VIGIL_CACHE_DIR=cache)

    def plan():
        r = run([VIGIL, "usdt", "plan", exe, "vt:*"], env=env)
        return r.stdout.split(), [ln for ln in r.stderr.splitlines()
                                  if "sites planned for the jump path" not in ln]

    first, said = plan()
    assert len(first) == 10 and len(said) == 1 and "vt:joined" in said[0], (first, said)
    files = os.listdir(cache)
    build_id = run(["readelf", "-n", exe]).stdout.split("Build ID: ")[1].split()[0]
    assert files == ["usdt-%s.plans" % build_id], files
    path = os.path.join(cache, files[0])
    text = open(path).read()
    assert text.startswith("vigil usdt plans 1\n") and text.endswith("end 11\n"), text
    assert plan() == (first, said)
    # a refusal planted for vt:ints is obeyed: the file was read, not planned again
    doc, _ = usdt_list(exe)
    pc = "%x" % int([p for p in doc["objects"][0]["probes"] if p["name"] == "ints"][0]["pc"], 16)
    ints = [p for p in first if p.split(":")[2] == pc][0]
    planted = re.sub(r"(?m)^\+ %s .*$" % pc, "- %s planted by the test" % pc, text)
    assert planted != text
    with open(path, "w") as f:
        f.write(planted)
    got, said2 = plan()
    assert ints not in got and len(got) == 9, got
    assert any("vt:ints" in ln and "planted by the test; it stays on the int3 path" in ln
               for ln in said2), said2
    # the object changed (its time): planned again, the cache file replaced
    os.utime(exe, None)
    assert plan() == (first, said) and "planted" not in open(path).read()
    # a cache file cut short, and one whose plan's bytes are not the file's
    good = open(path).read()
    for bad, why in ((good[:len(good) // 2], "not a plan file; planning again"),
                     (good.replace(":90", ":cc", 1), "does not match the file; planning again")):
        with open(path, "w") as f:
            f.write(bad)
        got, said3 = plan()
        lines = [ln for ln in said3 if "plan cache" in ln]
        assert got == first and len(lines) == 1 and why in lines[0], said3
        assert open(path).read() == good
    # no cache
    nocache = os.path.join(tmp, "none")
    env = dict(os.environ, VIGIL_CACHE_DIR="", XDG_CACHE_HOME=nocache, HOME=nocache)
    assert plan()[0] == first and not os.path.exists(nocache)
    print("cache: written, read (a planted refusal obeyed), replanned on change, "
          "cut and tampered files replaced with one line")


def main():
    what = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="vigil-usdt-")
    # the planners' cache of plans (docs/usdt.md, "Plan cache") in the test's own dir
    os.environ["VIGIL_CACHE_DIR"] = os.path.join(tmp, "cache")
    try:
        {"list": check_list, "record": check_record, "bad": check_bad,
         "postgres": check_postgres, "bufferpool": check_bufferpool,
         "linked": check_linked, "probes": check_probes,
         "dlopen": check_dlopen, "threads": check_threads, "model": check_model,
         "collector": check_collector, "general_regs": check_general_regs, "cache": check_cache}[what](tmp)
    except BaseException:
        print("kept for inspection: " + tmp)
        raise
    shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
