#!/usr/bin/env python3
"""The closing line of `make test`: tests passed, failed and skipped across the builds,
read from the JUnit files CTest wrote (ctest --output-junit), the skipped and failed
tests by name. Exit 1 if any test failed or a build's file is missing (its CTest run did
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
    skipped, failed, broken = [], [], []
    for arg in args:
        name, _, path = arg.partition("=")
        if not os.path.exists(path):
            broken.append(name)
            total["failed"] += 1
            continue
        for case in ET.parse(path).getroot().iter("testcase"):
            status = case.get("status")
            label = "%s:%s" % (name, case.get("name"))
            if status == "run":
                total["passed"] += 1
            elif status == "notrun" and case.find("skipped") is not None:
                total["skipped"] += 1
                skipped.append(label)
            else:  # failed, or not run for another reason (a missing executable)
                total["failed"] += 1
                failed.append(label)
    for label in skipped:
        print("skipped: %s" % label)
    for label in failed:
        print("failed: %s" % label)
    for name in broken:
        print("no results from the %s build (its CTest run did not finish)" % name)
    print("total: %d passed, %d failed, %d skipped" % (total["passed"], total["failed"],
                                                      total["skipped"]))
    return 1 if failed or broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
