#!/usr/bin/env python3
"""render.js (ui/src/display/render.js) in Debian's chromium against the static SVG of
`vigil display render`: the mailbox display's scenes at several instants are drawn by
render.js in a headless chromium (page served on loopback by this test, DOM dumped), and
each scene's elements (tags, classes, ids, parents, shapes, coordinates within 0.02 px,
labels, the clock) must equal those of the SVG the C renderer writes for the same
instant. A screenshot of one scene is kept with the test's output on failure.

usage: render_browser.py BIN-DIR SRC-DIR CHROMIUM     (exit 77: no chromium)
"""
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
NUM = re.compile(r"-?\d+(?:\.\d+)?")


def canon(e):
    """An element as comparable data: tag, attributes (numbers parsed), text, children."""
    attrs = {}
    for k, v in e.attrib.items():
        nums = NUM.findall(v)
        rest = NUM.sub("#", v)
        attrs[k] = (rest, [float(n) for n in nums])
    return (e.tag.replace(NS, ""), attrs, (e.text or "").strip(), [canon(c) for c in e])


def same(a, b, path="svg"):
    ta, aa, xa, ca = a
    tb, ab, xb, cb = b
    if ta != tb:
        return f"{path}: <{ta}> vs <{tb}>"
    if set(aa) != set(ab):
        return f"{path}/{ta}: attributes {sorted(aa)} vs {sorted(ab)}"
    for k in aa:
        (ra, na), (rb, nb) = aa[k], ab[k]
        if ra != rb or len(na) != len(nb) or any(abs(x - y) > 0.02 for x, y in zip(na, nb)):
            return f"{path}/{ta}@{k}: {aa[k]} vs {ab[k]}"
    if xa != xb:
        return f"{path}/{ta}: text {xa!r} vs {xb!r}"
    if len(ca) != len(cb):
        return f"{path}/{ta}: {len(ca)} children vs {len(cb)}"
    for i, (x, y) in enumerate(zip(ca, cb)):
        d = same(x, y, f"{path}/{ta}[{i}]")
        if d:
            return d
    return None


def main():
    bin_dir, src, chromium = (os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]),
                              sys.argv[3])
    if not os.access(chromium, os.X_OK):
        # a missing dependency is never a silent pass (tests/deps/deps.cmake)
        print(f"{'FAIL' if os.environ.get('CI') == 'true' else 'skip'}: no chromium at "
              f"{chromium} (Debian: chromium)")
        sys.exit(1 if os.environ.get("CI") == "true" else 77)
    vigil = os.path.join(bin_dir, "vigil")
    vgd = os.path.join(src, "examples", "mailbox", "mailbox.vgd")
    work = tempfile.mkdtemp(prefix="vgd-browser-")
    trace = os.path.join(work, "trace")

    def fail(msg):
        print(f"FAIL: {msg} (kept {work})")
        sys.exit(1)

    p = subprocess.run([os.path.join(bin_dir, "mailbox"), "--seed", "2"], capture_output=True,
                       env=dict(os.environ, VIGIL_OUT=trace), timeout=120)
    if p.returncode:
        fail("mailbox did not record")
    scenes, svgs, picks = [], [], []
    good = os.path.join(src, "tests", "display", "good")
    # the paper's display, every icon and aspect, and time as an axis
    for spec in (vgd, os.path.join(good, "every_form.vgd"), os.path.join(good, "axis.vgd")):
        changes = [int(l) for l in subprocess.run([vigil, "display", "changes", spec, trace],
                                                  capture_output=True, check=True,
                                                  timeout=120).stdout.split()]
        for k in range(1, 8):
            at = changes[len(changes) * k // 8] + 1
            out = subprocess.run([vigil, "display", "render", spec, trace, "--at", f"{at}ns",
                                  "--json"], capture_output=True, check=True, timeout=120)
            scenes.append(json.loads(out.stdout))
            path = os.path.join(work, f"scene{len(picks)}.svg")
            subprocess.run([vigil, "display", "render", spec, trace, "--at", f"{at}ns", "-o",
                            path], check=True, timeout=120)
            svgs.append(ET.parse(path).getroot())
            picks.append(at)
    if not any(i["flash"] for s in scenes[:7] for i in s["icons"]) or \
            not any(i["parent"] for s in scenes[:7] for i in s["icons"]):
        fail("the chosen scenes have no flashing or no inclusion: nothing compared")

    site = os.path.join(work, "site")
    os.makedirs(site)
    shutil.copy(os.path.join(src, "ui", "src", "display", "render.js"), site)
    data = json.dumps(scenes).replace("</", "<\\/")
    with open(os.path.join(site, "index.html"), "w") as f:
        f.write("<!doctype html><html><body>\n"
                f'<script id="scenes" type="application/json">{data}</script>\n'
                + "".join(f'<svg id="s{k}" xmlns="http://www.w3.org/2000/svg"></svg>\n'
                          for k in range(len(scenes))) +
                '<script type="module">\n'
                "import { renderDisplay } from './render.js';\n"
                "const scenes = JSON.parse(document.getElementById('scenes').textContent);\n"
                "scenes.forEach((s, k) => renderDisplay(document.getElementById('s' + k), s));\n"
                "document.body.dataset.done = scenes.length;\n"
                "</script></body></html>\n")
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={work}/profile"]
    try:
        dom = subprocess.run([chromium] + flags + ["--dump-dom", url], capture_output=True,
                             timeout=120).stdout.decode()
        subprocess.run([chromium] + flags + [f"--screenshot={work}/page.png",
                                              "--window-size=900,600", url],
                       capture_output=True, timeout=120)
    finally:
        server.shutdown()
    if f'data-done="{len(scenes)}"' not in dom:
        fail(f"render.js did not run to the end: {dom[:500]!r}")
    problems = []
    for k in range(len(scenes)):
        m = re.search(rf'<svg id="s{k}"[^>]*>.*?</svg>', dom, re.S)
        if not m:
            problems.append(f"scene {k}: no svg in the page")
            continue
        page = ET.fromstring(m.group(0).replace(f'id="s{k}" ', ""))
        a = [canon(c) for c in page]
        b = [canon(c) for c in svgs[k]]
        if len(a) != len(b):
            problems.append(f"scene {k}: {len(a)} elements drawn by render.js, {len(b)} by vigil")
            continue
        for x, y in zip(a, b):
            d = same(x, y)
            if d:
                problems.append(f"scene {k} (+{picks[k]} ns): {d}")
                break
    if problems:
        fail("render.js and vigil display render differ:\n  " + "\n  ".join(problems))
    shutil.rmtree(work)
    print(f"ok: {len(scenes)} scenes drawn alike by render.js in chromium and by vigil")


if __name__ == "__main__":
    main()
