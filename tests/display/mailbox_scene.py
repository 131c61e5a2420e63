#!/usr/bin/env python3
"""The mailbox display (examples/mailbox/mailbox.vgd) against `vigil query`.

Records the mailbox example, asks `vigil query` for the tuples of Process, RunningOn,
Waiting and ResumedbyP1 (the paper's query, written here, not taken from the display
file), and at chosen instants (every instant at which a shown relation changes, the
instant before it, and the middle of each ResumedbyP1 event's hold) compares the scene
of `vigil display render --json` with what the tuples say holds then:
  * one circle per live process (exactly the Process tuples that hold), none twice;
  * each inside the rectangle of the processor it runs on when RunningOn holds (the
    scene's parent, and the circle's box inside the rectangle's), else inside nothing;
  * the flashing circles are exactly the processes of ResumedbyP1 events within the
    display's hold before the instant;
  * the Waiting pointers go from each waiting tuple's mailbox to its process.
At some instants the same scene is rendered as SVG and its icons, parents and flashing
compared with the JSON. With time as an axis (tests/display/good/axis.vgd), the bars,
the bars inside processors' rows and the marks equal the Process, RunningOn and
ResumedbyP1 tuples of the window. Each property must be met non-vacuously across the run.

usage: mailbox_scene.py BIN-DIR SRC-DIR MAILBOX-OPTIONS...
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

RESUMED = """range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W
"""


def icons_by(icons):
    return {i["id"]: i for i in icons}


def main():
    bin_dir, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    options = sys.argv[3:]
    vigil = os.path.join(bin_dir, "vigil")
    vgd = os.path.join(src, "examples", "mailbox", "mailbox.vgd")
    work = tempfile.mkdtemp(prefix="vgd-mailbox-")
    problems = []

    def run(args, **kw):
        p = subprocess.run([vigil] + args, capture_output=True, timeout=120, **kw)
        if p.returncode != 0:
            print(f"FAIL: vigil {' '.join(args)} exited with {p.returncode}: "
                  f"{p.stderr.decode()[-1000:]} (kept {work})")
            sys.exit(1)
        return p.stdout.decode()

    trace = os.path.join(work, "trace")
    # recorded by the program itself (linked with libvigil), as in the sanitizer build
    p = subprocess.run([os.path.join(bin_dir, "mailbox")] + options, capture_output=True,
                       env=dict(os.environ, VIGIL_OUT=trace), timeout=120)
    if p.returncode != 0:
        print(f"FAIL: mailbox {' '.join(options)} exited with {p.returncode} (kept {work})")
        sys.exit(1)

    def query(text):
        out = run(["query", trace, "--format", "json", "-e", text])
        return [json.loads(l) for l in out.splitlines() if l.strip()]

    procs = query("range of P is Process retrieve (P.name)")
    running = query("range of R is RunningOn retrieve (R.process, R.processor)")
    waiting = query("range of W is Waiting retrieve (W.process, W.mailbox)")
    resumed = query(RESUMED)
    changes = [int(l) for l in run(["display", "changes", vgd, trace]).split()]
    first_scene = json.loads(run(["display", "render", vgd, trace, "--at", "0", "--json"]))
    first, last, hold = first_scene["first"], first_scene["last"], first_scene["time"]["hold"]

    def holds(t, at):
        return t["from"] <= at < t["to"]

    instants = set()
    for c in changes:
        for at in (first + c, first + c - 1):
            if first <= at < last:
                instants.add(at)
    for r in resumed:
        if first <= r["at"] + hold // 2 < last:
            instants.add(r["at"] + hold // 2)
    instants = sorted(instants)
    if len(instants) > 400:  # bounded time: an even sample, the flashing ones kept
        keep = set(instants[::len(instants) // 300 + 1])
        keep |= {r["at"] + hold // 2 for r in resumed if r["at"] + hold // 2 in instants}
        instants = sorted(keep)

    seen = {"inside": 0, "flash": 0, "waiting": 0, "outside": 0}
    for n, at in enumerate(instants):
        scene = json.loads(run(["display", "render", vgd, trace, "--at", f"@{at}", "--json"]))
        icons = {i["id"]: i for i in scene["icons"]}
        live = [i for i in scene["icons"] if i["relation"] == "Process" and not i["past"]]
        names = sorted(i["entity"]["name"] for i in live)
        expected = sorted(t["values"]["name"] for t in procs if holds(t, at))
        where = f"at +{at - first} ns"
        if names != expected:
            problems.append(f"{where}: circles {names}, live processes {expected}")
        cpu = {t["values"]["process"]: t["values"]["processor"] for t in running if holds(t, at)}
        for i in live:
            name = i["entity"]["name"]
            parent = icons.get(i["parent"]) if i["parent"] else None
            pname = parent["entity"]["name"] if parent and parent["entity"] else None
            if pname != cpu.get(name):
                problems.append(f"{where}: {name} drawn inside {pname}, runs on {cpu.get(name)}")
                continue
            if parent:
                seen["inside"] += 1
                if parent["relation"] != "Processor" or not (
                        parent["x"] - parent["w"] / 2 <= i["x"] - i["w"] / 2 and
                        i["x"] + i["w"] / 2 <= parent["x"] + parent["w"] / 2 and
                        parent["y"] - parent["h"] / 2 <= i["y"] - i["h"] / 2 and
                        i["y"] + i["h"] / 2 <= parent["y"] + parent["h"] / 2):
                    problems.append(f"{where}: {name}'s circle is not inside {pname}'s box")
            else:
                seen["outside"] += 1
        flashing = sorted(i["entity"]["name"] for i in scene["icons"] if i["flash"])
        should = sorted({r["values"]["Process"] for r in resumed if r["at"] <= at < r["at"] + hold})
        if flashing != should:
            problems.append(f"{where}: flashing {flashing}, ResumedbyP1 says {should}")
        seen["flash"] += bool(should)
        links = sorted((icons[l["from"]]["entity"]["name"], icons[l["to"]]["entity"]["name"])
                       for l in scene["links"] if l["relation"] == "Waiting" and not l["past"])
        wait = sorted({(t["values"]["mailbox"], t["values"]["process"]) for t in waiting
                       if holds(t, at)})
        if links != wait:
            problems.append(f"{where}: Waiting pointers {links}, Waiting holds {wait}")
        seen["waiting"] += bool(wait)
        if n % 25 == 0 or (should and seen["flash"] < 3):
            svg = os.path.join(work, "scene.svg")
            run(["display", "render", vgd, trace, "--at", f"@{at}", "-o", svg])
            ns = "{http://www.w3.org/2000/svg}"
            groups = [g for g in ET.parse(svg).getroot().iter(ns + "g")
                      if "icon" in g.get("class", "").split()]
            got = sorted((g.get("data-id"), g.get("data-parent") or None,
                          "flash" in g.get("class").split(),
                          g.find(ns + "animate") is not None) for g in groups)
            want = sorted((i["id"], i["parent"], i["flash"], i["flash"]) for i in scene["icons"])
            if got != want:
                problems.append(f"{where}: the SVG's icons differ from the JSON's")
        if len(problems) > 20:
            break
    # time as an axis (tests/display/good/axis.vgd): at instants amid the run, one bar
    # per Process tuple in [T - span, T], one bar inside a processor's row per RunningOn
    # tuple there, one mark per ResumedbyP1 event there
    axis = os.path.join(src, "tests", "display", "good", "axis.vgd")
    for at in sorted({running[len(running) * k // 6]["to"] for k in range(1, 6)} |
                     {r["at"] for r in resumed[:1]}):  # amid the activity
        scene = json.loads(run(["display", "render", axis, trace, "--at", f"@{at}", "--json"]))
        t0 = scene["axis"]["from"]

        def within(t):
            return t["from"] <= at and t["to"] > t0 if "to" in t else t0 <= t["at"] <= at

        icons = scene["icons"]
        bars = sorted(i["entity"]["name"] for i in icons
                      if i["relation"] == "Process" and not i["ghost"])
        want = sorted(t["values"]["name"] for t in procs if within(t))
        if bars != want:
            problems.append(f"axis at +{at - first}: process rows {bars}, tuples {want}")
        inside = sorted((i["entity"]["name"], icons_by(icons)[i["parent"]]["entity"]["name"])
                        for i in icons if i["ghost"] and "~RunningOn#" in i["id"])
        want = sorted((t["values"]["process"], t["values"]["processor"]) for t in running
                      if within(t))
        if inside != want:
            problems.append(f"axis at +{at - first}: {len(inside)} bars inside processors, "
                            f"{len(want)} RunningOn tuples")
        marks = sorted(i["entity"]["name"] for i in icons if "~ResumedbyP1#" in i["id"])
        want = sorted(r["values"]["Process"] for r in resumed if within(r))
        if marks != want:
            problems.append(f"axis at +{at - first}: marks {marks}, ResumedbyP1 {want}")
        seen["axis"] = seen.get("axis", 0) + bool(want) + len(inside)
    for k, v in seen.items():
        if not v:
            problems.append(f"no instant had a case of '{k}': the run proves nothing about it")
    if problems:
        print(f"FAIL: mailbox display {' '.join(options)} ({len(instants)} instants; kept {work})")
        for p in problems[:20]:
            print("  " + p)
        sys.exit(1)
    shutil.rmtree(work)
    print(f"ok: {len(instants)} instants, {seen}")


if __name__ == "__main__":
    main()
