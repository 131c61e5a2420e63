#!/usr/bin/python3
"""The relations cache is keyed on the vigil build (docs/query.md, "The relations
cache"), not on the path the process runs from:

1. a cache written by vigil is read warm by the same vigil run under valgrind (there
   /proc/self/exe is valgrind itself), with the same answer;
2. a copy of vigil whose GNU build id differs (one byte of its note changed: another
   build as far as the key can tell) does not read that cache: it builds from the trace
   (outcome not warm), with the same answer; and vigil itself, after it, does not read
   the copy's cache either;
3. the trace named otherwise (a relative path, `./` and a trailing slash, a symbolic
   link to it) is the same trace: the cache is read warm, with the same answer.

    cache_key_test.py --bin BUILD/bin [--keep DIR]"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cache_testlib  # noqa: E402
from cache_testlib import check  # noqa: E402

QUERY = """range of A1 is A
range of E1 is E
retrieve (A1.tag, A1.key)
retrieve (E1.tag, n = count(E1.key by E1.tag))
"""


def build_id(path):
    p = subprocess.run(["readelf", "-n", path], capture_output=True, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", p.stdout)
    check(m, "%s has no GNU build id note: %s" % (path, p.stdout[-300:]))
    return bytes.fromhex(m.group(1))


def other_build(vigil, out):
    """A copy of vigil with one byte of its build id changed."""
    bid = build_id(vigil)
    with open(vigil, "rb") as f:
        data = bytearray(f.read())
    at = data.find(bid)
    check(at >= 0 and data.find(bid, at + 1) < 0, "the build id is not once in %s" % vigil)
    data[at + len(bid) - 1] ^= 0xFF
    with open(out, "wb") as f:
        f.write(data)
    os.chmod(out, 0o755)
    check(build_id(out) != bid, "the copy's build id did not change")
    return out


def run(v, args, work):
    trace = v.record(os.path.join(work, "trace"), 3, 3000)
    ref = v.run_query(trace, QUERY, env={"VIGIL_CACHE": "off"})
    check(ref[0] == 0 and ref[1], "the query failed: %s" % ref[2])
    cold = v.run_query(trace, QUERY)
    check(cold[3].get("cache") == "cold" and cold[:3] == ref[:3],
          "first query: cache %s, %s" % (cold[3].get("cache"), cold[2]))

    os.symlink(trace, os.path.join(work, "link"))
    for name in ("trace", "./trace/", "link"):
        got = v.run_query(name, QUERY, cwd=work)
        check(got[3].get("cache") == "warm" and got[:3] == ref[:3],
              "the trace named %s: cache %s, %s" % (name, got[3].get("cache"), got[2]))
    print("named otherwise: warm, the same answers")

    # (valgrind's own words to a file: the stderr compared is vigil's)
    log = "--log-file=" + os.path.join(work, "valgrind.log")
    grind = v.run_query(trace, QUERY, prefix=["valgrind", "-q", log])
    check(grind[3].get("cache") == "warm",
          "under valgrind the cache was not read: cache %s, %s" % (grind[3].get("cache"),
                                                                  grind[2][-5:]))
    check(grind[:3] == ref[:3], "under valgrind: exit %d, %s" % (grind[0], grind[2][-5:]))
    print("valgrind: warm, the same %d bytes" % len(grind[1]))

    other = other_build(os.path.join(v.bin, "vigil"), os.path.join(work, "vigil-other"))
    got = v.run_query(trace, QUERY, vigil=other)
    check(got[3].get("cache") not in ("warm", None) and got[:3] == ref[:3],
          "another build read the cache: cache %s, exit %d, %s" % (got[3].get("cache"), got[0],
                                                                  got[2]))
    back = v.run_query(trace, QUERY)
    check(back[3].get("cache") not in ("warm", None) and back[:3] == ref[:3],
          "vigil read another build's cache: cache %s, %s" % (back[3].get("cache"), back[2]))
    print("another build: %s, then vigil: %s, the same answers"
          % (got[3]["cache"], back[3]["cache"]))


if __name__ == "__main__":
    sys.exit(cache_testlib.main("query.cache_key", __doc__, run))
