#!/usr/bin/env python3
"""Several listeners and a thread blocked for good after its last event: the process's
end must copy that event to the listeners (it is owed to them until the thread's next
event, which never comes). The main output leaves the blocker out (VIGIL_REPORT_THREADS),
so its last event is also one the main output does not take.

usage: listen_exit_test.py BIN_DIR SUBJECT"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def names(vigil, trace):
    r = subprocess.run([vigil, "dump", "--json", trace], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        print("FAIL: vigil dump %s: %s" % (trace, r.stderr[-300:]))
        sys.exit(1)
    return sorted(e["name"] for e in map(json.loads, r.stdout.splitlines())
                  if e["name"].startswith("le."))


def main():
    vigil = os.path.join(sys.argv[1], "vigil")
    work = tempfile.mkdtemp(prefix="vigil-listen-exit-")
    ok = True
    try:
        env = dict(os.environ, VIGIL_SENSORS="-vg.*", VIGIL_REPORT_THREADS="-blocker",
                   VIGIL_LISTENERS="%s/all=all;%s/last=all sensors=le.last" % (work, work))
        subprocess.run([vigil, "record", "-q", "-o", work + "/main", "--", sys.argv[2]],
                       env=env, check=True, timeout=120, stdout=subprocess.DEVNULL)
        for trace, want in (("main", ["le.main"]), ("all", ["le.last", "le.main"]),
                            ("last", ["le.last"])):
            got = names(vigil, os.path.join(work, trace))
            print("%s: %s" % (trace, got))
            if got != want:
                print("FAIL: %s holds %s, expected %s" % (trace, got, want))
                ok = False
        print("ok" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("kept " + work)


if __name__ == "__main__":
    sys.exit(main())
