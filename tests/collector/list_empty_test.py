#!/usr/bin/env python3
"""`vigil probes --collector ADDR list` before any subject's table is known: an answer of
no sensors, and, under the sanitizers, no undefined behaviour in vigild (it copied from a
NULL buffer of zero bytes). Meaningful under ASan+UBSan: vigild and vigil instrumented."""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vgd  # noqa: E402


def main():
    work = tempfile.mkdtemp(prefix="vigil-listempty-")
    ok = False
    try:
        c = vgd.Collector(os.path.join(work, "col")).start()
        r = vgd.run([os.path.join(vgd.bindir(), "vigil"), "probes", "--collector", c.addr(),
                     "--json", "list"])
        vgd.check(r.returncode == 0, f"list: exit {r.returncode}: {r.stderr}")
        sensors = json.loads(r.stdout).get("sensors")
        vgd.check(sensors == [], f"list with no subject: {r.stdout}")
        rc = c.stop()
        log = c.logtext()
        vgd.check(rc == 0 and "runtime error" not in log and "Sanitizer" not in log,
                  f"vigild exit {rc}: {log[-800:]}")
        ok = True
        print("ok: an empty list, and vigild clean")
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


main()
