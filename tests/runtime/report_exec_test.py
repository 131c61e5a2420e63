#!/usr/bin/env python3
"""A process that execs, recorded under a filter that leaves out process begins
(VIGIL_REPORT=activity): the new image must not report the process's end either (rule 1:
nothing reclaimed whose creation was not reported), and with every category both are.

usage: report_exec_test.py BIN_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    vigil = os.path.join(sys.argv[1], "vigil")
    work = tempfile.mkdtemp(prefix="vigil-report-exec-")
    try:
        for report, want in (("activity", 0), ("all", 2)):
            trace = os.path.join(work, report)
            env = dict(os.environ, VIGIL_REPORT=report)
            subprocess.run([vigil, "record", "-q", "-o", trace, "--", "sh", "-c",
                            "exec /bin/true"],
                           env=env, check=True, timeout=120)
            check = subprocess.run([vigil, "check", trace], capture_output=True, text=True,
                                   timeout=120)
            if check.returncode != 0:
                print(f"VIGIL_REPORT={report}: vigil check exited {check.returncode}:\n"
                      f"{check.stdout}{check.stderr}")
                return 1
            dump = subprocess.run([vigil, "dump", trace], capture_output=True, text=True,
                                  timeout=120, check=True).stdout
            got = sum(line.split()[3] in ("vg.process.begin", "vg.process.end")
                      for line in dump.splitlines() if len(line.split()) > 3)
            if got != want:
                print(f"VIGIL_REPORT={report}: {got} process begins and ends, expected {want}")
                return 1
        print("exec under a filter: consistent")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
