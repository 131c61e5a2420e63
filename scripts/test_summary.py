#!/usr/bin/env python3
"""The closing line of `make test`: tests passed, failed and skipped across the builds,
read from the JUnit files CTest wrote (ctest --output-junit), the skipped and failed
tests by name. A test that failed in the parallel run and passed when run again alone
(junit-rerun.xml beside junit.xml, scripts/run-ctest.sh) counts as passed and is named as
flaky. Exit 1 if any test failed (twice) or a build's file is missing (its CTest run did
not finish).
usage: test_summary.py NAME=JUNIT.xml ..."""
import os
import sys
import xml.etree.ElementTree as ET


def main(args):
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    total = {"passed": 0, "failed": 0, "skipped": 0}
    skipped, failed, broken, flaky = [], [], [], []
    for arg in args:
        name, _, path = arg.partition("=")
        if not os.path.exists(path):
            broken.append(name)
            total["failed"] += 1
            continue
        rerun = os.path.join(os.path.dirname(path), "junit-rerun.xml")
        passed_alone = set()
        if os.path.exists(rerun):
            passed_alone = {c.get("name") for c in ET.parse(rerun).getroot().iter("testcase")
                            if c.get("status") == "run"}
        for case in ET.parse(path).getroot().iter("testcase"):
            status = case.get("status")
            label = "%s:%s" % (name, case.get("name"))
            if status == "fail" and case.get("name") in passed_alone:
                total["passed"] += 1
                flaky.append(label)
            elif status == "run":
                total["passed"] += 1
            elif status == "notrun" and case.find("skipped") is not None:
                total["skipped"] += 1
                skipped.append(label)
            else:  # failed, or not run for another reason (a missing executable)
                total["failed"] += 1
                failed.append(label)
    for label in skipped:
        print("skipped: %s" % label)
    for label in flaky:
        print("flaky: %s (failed in the parallel run, passed alone)" % label)
    for label in failed:
        print("failed: %s" % label)
    for name in broken:
        print("no results from the %s build (its CTest run did not finish)" % name)
    print("total: %d passed (%d only when run again alone), %d failed, %d skipped"
          % (total["passed"], len(flaky), total["failed"], total["skipped"]))
    return 1 if failed or broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
