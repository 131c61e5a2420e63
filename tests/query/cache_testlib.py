"""What the tests of the relations cache and of the build's and the query's memory share
(cache_test.py, spill_test.py, cache_key_test.py, memory_test.py): a failure raised at
once, and vigil run with HOME and a cache directory inside the test's own temporary
directory, small traces cached too (VIGIL_CACHE_MIN_EVENTS=0), none of the caller's cache,
budget or thread settings, and diff_subject recorded by it; their command line and
temporary directory."""
import argparse
import json
import os
import shutil
import subprocess
import tempfile


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


class Vigil:
    def __init__(self, bin_dir, work):
        self.bin = bin_dir
        self.env = dict(os.environ)
        for k in ("XDG_CACHE_HOME", "VIGIL_CACHE", "VIGIL_BUILD_MEMORY", "VIGIL_QUERY_MEMORY",
                  "VIGIL_THREADS"):
            self.env.pop(k, None)
        self.env.update({"VIGIL_CACHE_MIN_EVENTS": "0", "HOME": os.path.join(work, "home"),
                         "VIGIL_CACHE_DIR": os.path.join(work, "cachedir")})

    def run_query(self, trace, text, env=None, args=(), prefix=(), vigil=None, cwd=None):
        """`vigil query TRACE -e TEXT --format json --stats ARGS` (vigil: another binary,
        prefix: a command it runs under, env: settings added, cwd: where it runs): (exit
        status, stdout, stderr lines but the stats, the stats)"""
        e = dict(self.env)
        e.update(env or {})
        cmd = list(prefix) + [vigil or os.path.join(self.bin, "vigil"), "query", trace, "-e",
                              text, "--format", "json", "--stats"] + list(args)
        p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=300, cwd=cwd)
        lines = p.stderr.splitlines()
        stats = [json.loads(x)["stats"] for x in lines if x.startswith('{"stats"')]
        rest = [x for x in lines if not x.startswith('{"stats"')]
        return p.returncode, p.stdout, rest, stats[0] if stats else {}

    def record(self, out, seed, events):
        p = subprocess.run([os.path.join(self.bin, "vigil"), "record", "-q", "-o", out, "--",
                            os.path.join(self.bin, "diff_subject"), str(seed), str(events)],
                           env=self.env, capture_output=True, text=True, timeout=300)
        check(p.returncode == 0, "vigil record: %s" % p.stderr)
        return out


def main(name, doc, run, vigil_class=Vigil):
    """The command line of these tests, `--bin BUILD/bin [--keep DIR]`: run(vigil, args,
    work) in a temporary directory (DIR with --keep), removed unless something failed
    (then kept and named). Returns the exit status."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--keep", help="work here and keep it")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    work = args.keep or tempfile.mkdtemp(prefix="vigil-%s-" % name.split(".")[-1])
    os.makedirs(work, exist_ok=True)
    try:
        run(vigil_class(args.bin, work), args, work)
    except Fail as e:
        print("%s: FAILED: %s\n(work kept in %s)" % (name, e, work))
        return 1
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print("%s: ok" % name)
    return 0
