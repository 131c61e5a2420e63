#!/usr/bin/python3
"""The vigil front end and vigil-full (src/cli/CMakeLists.txt, src/cli/front_end.c):

    front_end_test.py BUILD/bin

1. the front end loads none of the libraries of the commands it leaves to vigil-full
   (TLS, PostgreSQL's client, the HTTP server, the disassembler, protobuf-c), and fewer
   than vigil-full; nor libdw, libelf and the compression libraries under them (its
   NEEDED entries and ldd): symbolization loads libdw when it is used (src/model/
   symbolize.c) and `vigil relations PROGRAM` (libelf) runs in vigil-full;
2. a command it does not hold (ui, usdt, store) runs in vigil-full with the same
   arguments, and in its place (the same pid: `vigil record`'s subject sees vigil as its
   parent);
3. with no vigil-full beside it, such a command fails with one line naming the place
   looked at (exit 2), while `vigil query` still answers;
4. both share one relations cache: a query by vigil-full over a trace the front end
   cached is warm, and the front end's after it too;
5. so does the Python module (libvigilquery.so, keyed by the vigil beside it): over the
   trace the CLI cached its query is warm, and over a copy of the trace it cached first
   the CLI's (vigil and vigil-full) are warm; no cache file is written again (their
   modification times) and the answers are the CLI's.
Every vigil runs with a HOME and cache directory in the test's own temporary directory."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HEAVY = ("libssl", "libcrypto", "libpq", "libmicrohttpd", "libgnutls", "libcapstone",
         "libprotobuf-c", "libdw", "libelf", "libz.", "liblzma", "libbz2", "libzstd")
QUERY = "range of A1 is A retrieve (A1.all)"


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def libs(path):
    p = subprocess.run(["ldd", path], capture_output=True, text=True, check=True)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def needed(path):
    """The NEEDED entries of an ELF file's dynamic section (what the loader maps first)."""
    p = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True)
    return [line.split("[", 1)[1].rstrip("]") for line in p.stdout.splitlines()
            if "(NEEDED)" in line]


PY_QUERY = """import json, sys, vigil
stats = {}
rows = vigil.query(sys.argv[1], sys.argv[2], stats=stats)
print(json.dumps({"cache": stats.get("cache"), "rows": [r.values for r in rows]}))
"""


def python_cache_of(bin_dir, trace, env):
    """The Python module's query over trace: its cache outcome and the answer's values."""
    src = os.environ.get("VIGIL_SRC") or os.path.join(os.path.dirname(__file__), "..", "..")
    penv = dict(env, PYTHONPATH=os.path.join(src, "python"),
                VIGIL_QUERY_LIB=os.path.join(bin_dir, "libvigilquery.so"))
    p = subprocess.run(["/usr/bin/python3", "-c", PY_QUERY, trace, QUERY], capture_output=True,
                       text=True, env=penv, timeout=300)
    check(p.returncode == 0, "vigil.query: exit %d: %s" % (p.returncode, p.stderr[-600:]))
    got = json.loads(p.stdout)
    return got["cache"], got["rows"]


def cache_files(trace):
    """The cache's files beside the trace (manifest and relations, not the check records)
    and their modification times."""
    return {f: os.stat(os.path.join(trace, f)).st_mtime_ns for f in os.listdir(trace)
            if f.startswith(".vigil-cache") and "%" not in f}


def cli_values(answer):
    return [json.loads(line)["values"] for line in answer.splitlines()]


def cache_of(bin_dir, prog, trace, env):
    p = subprocess.run([os.path.join(bin_dir, prog), "query", trace, "-e", QUERY, "--format",
                        "json", "--stats"], capture_output=True, text=True, env=env,
                       timeout=300)
    check(p.returncode == 0, "%s query: exit %d: %s" % (prog, p.returncode, p.stderr))
    stats = [json.loads(x)["stats"] for x in p.stderr.splitlines() if x.startswith('{"stats"')]
    return stats[0]["cache"], p.stdout


def run(bin_dir, work):
    front, full = os.path.join(bin_dir, "vigil"), os.path.join(bin_dir, "vigil-full")
    have, every = libs(front), libs(full)
    heavy = [x for x in have + needed(front) if x.startswith(HEAVY)]
    check(not heavy, "the front end loads %s" % heavy)
    check(len(have) < len(every), "the front end loads %d libraries, vigil-full %d"
          % (len(have), len(every)))
    env = dict(os.environ, HOME=os.path.join(work, "home"), VIGIL_CACHE_MIN_EVENTS="0",
               VIGIL_CACHE_DIR=os.path.join(work, "cachedir"))
    for k in ("XDG_CACHE_HOME", "VIGIL_CACHE", "VIGIL_THREADS"):
        env.pop(k, None)
    # 2. commands run by vigil-full
    for cmd, says in (("ui", "usage: vigil ui"), ("usdt", "vigil usdt"),
                      ("store", "vigil store")):
        p = subprocess.run([front, cmd, "--help"], capture_output=True, text=True, env=env,
                           timeout=60)
        check(p.returncode == 0 and says in p.stdout + p.stderr,
              "vigil %s --help: exit %d, %r" % (cmd, p.returncode, (p.stdout + p.stderr)[:200]))
    trace = os.path.join(work, "run1")
    pidfile = os.path.join(work, "parent")
    p = subprocess.Popen([front, "record", "-q", "-o", trace, "--", "/bin/sh", "-c",
                          "echo $PPID > %s; exec %s 5 2000" % (
                              pidfile, os.path.join(bin_dir, "diff_subject"))],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=300)
    check(p.returncode == 0, "vigil record: exit %d: %s" % (p.returncode, err))
    with open(pidfile) as f:
        parent = int(f.read())
    check(parent == p.pid, "the subject's parent is pid %d, not vigil's %d" % (parent, p.pid))
    # 4. one cache for both
    first = cache_of(bin_dir, "vigil", trace, env)
    check(first[0] == "cold", "the first query: cache %s" % first[0])
    for prog in ("vigil-full", "vigil"):
        got = cache_of(bin_dir, prog, trace, env)
        check(got == ("warm", first[1]), "%s after the front end: cache %s, answer %s"
              % (prog, got[0], "the same" if got[1] == first[1] else "another"))
    # 5. the Python module shares it, both ways
    files = cache_files(trace)
    check(files, "no cache beside %s" % trace)
    got = python_cache_of(bin_dir, trace, env)
    check(got == ("warm", cli_values(first[1])), "vigil.query after the CLI: cache %s, answer "
          "%s" % (got[0], "the same" if got[1] == cli_values(first[1]) else "another"))
    check(cache_files(trace) == files, "vigil.query wrote the CLI's cache again")
    copy = os.path.join(work, "run1-copy")
    shutil.copytree(trace, copy, ignore=shutil.ignore_patterns(".vigil-cache*"))
    got = python_cache_of(bin_dir, copy, env)
    check(got[0] == "cold" and got[1] == cli_values(first[1]),
          "vigil.query over a copy: cache %s" % got[0])
    files = cache_files(copy)
    check(files, "vigil.query left no cache beside %s" % copy)
    for prog in ("vigil", "vigil-full"):
        got = cache_of(bin_dir, prog, copy, env)
        check(got == ("warm", first[1]), "%s after vigil.query: cache %s, answer %s"
              % (prog, got[0], "the same" if got[1] == first[1] else "another"))
    check(cache_files(copy) == files, "the CLI wrote vigil.query's cache again")
    # 3. no vigil-full beside it
    alone = os.path.join(work, "alone")
    os.makedirs(alone)
    shutil.copy2(front, alone)
    p = subprocess.run([os.path.join(alone, "vigil"), "ui", "--help"], capture_output=True,
                       text=True, env=env, timeout=60)
    lines = p.stderr.splitlines()
    check(p.returncode == 2 and len(lines) == 1 and "vigil-full" in lines[0] and
          alone in lines[0], "vigil ui without vigil-full: exit %d, %r"
          % (p.returncode, p.stderr))
    # a program's relations (libelf): vigil-full's too
    p = subprocess.run([os.path.join(alone, "vigil"), "relations", "/bin/true"],
                       capture_output=True, text=True, env=env, timeout=60)
    lines = p.stderr.splitlines()
    check(p.returncode == 2 and len(lines) == 1 and "vigil-full" in lines[0],
          "vigil relations PROGRAM without vigil-full: exit %d, %r" % (p.returncode, p.stderr))
    p = subprocess.run([os.path.join(alone, "vigil"), "query", trace, "-e", QUERY, "--format",
                        "json"], capture_output=True, text=True, env=env, timeout=300)
    check(p.returncode == 0 and p.stdout == first[1], "vigil query without vigil-full: "
          "exit %d, %s" % (p.returncode, p.stderr))
    print("front end: %d libraries (vigil-full %d); ui, usdt, store, record and relations "
          "PROGRAM run by vigil-full in its place; one cache for vigil, vigil-full and "
          "Python" % (len(have), len(every)))


def main():
    bin_dir = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="vigil-front-end-")
    try:
        run(bin_dir, work)
    except Fail as e:
        print("install.front_end: FAILED: %s\n(work kept in %s)" % (e, work))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("install.front_end: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
