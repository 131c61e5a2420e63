#!/usr/bin/env python3
"""Summarizes a trace from `vigil dump --json` lines on stdin: events per type, the
entities by kind, the processes and threads that recorded.
usage: vigil dump --json TRACE | summarize.py"""
import json
import sys
from collections import Counter, defaultdict


def main():
    names = Counter()
    entities = defaultdict(list)
    threads = defaultdict(set)  # (pid, proc) -> tids
    for n, line in enumerate(sys.stdin, 1):
        try:
            e = json.loads(line)
            name = e["name"]
        except (ValueError, KeyError) as err:
            print(f"summarize: line {n} is not an event of vigil dump --json: {err}",
                  file=sys.stderr)
            return 2
        names[name] += 1
        threads[(e.get("pid"), e.get("proc"))].add(e.get("tid"))
        if name == "vg.entity.create":
            f = e["fields"]
            entities[f["kind"]].append(f["name"])
    total = sum(names.values())
    print(f"events: {total}")
    for name, k in sorted(names.items()):
        print(f"  {name:<26} {k:>7}")
    print("entities:")
    for kind, members in sorted(entities.items()):
        shown = " ".join(members[:12]) + (" ..." if len(members) > 12 else "")
        print(f"  {kind:<10} {len(members):>4}  {shown}")
    print("processes and threads that recorded:")
    for (pid, proc), tids in sorted(threads.items(), key=str):
        print(f"  {proc} (pid {pid}): {len(tids)} thread(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
