"""What the benchmarks of vigil ui share (bench/ui_bench.py, ui_models_bench.py,
ui_nets_bench.py): the build's parts checked, vigil ui started until it prints its URL and
stopped by SIGINT, the page side run in Debian's chromium (node + playwright-core)."""
import json
import os
import re
import signal
import subprocess
import sys
import time


def prepare(say, *parts):
    """(build, smoke, out) of a page benchmark's command line (BUILD_DIR) and environment
    (VIGIL_BENCH_SMOKE, BENCH_OUT); None when a part of the build it needs (besides vigil,
    playwright-core and chromium: parts, relative to the build) is missing (said)."""
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    out = os.environ.get("BENCH_OUT", os.path.join(build, "bench"))
    os.makedirs(out, exist_ok=True)
    for p in ["bin/vigil", "ui-npm/node_modules/playwright-core", "/usr/bin/chromium", *parts]:
        if not os.path.exists(os.path.join(build, p)):
            say("%s is missing (make deps, make build)" % os.path.join(build, p))
            return None
    return build, os.environ.get("VIGIL_BENCH_SMOKE") == "1", out


def save(out, name, res):
    with open(os.path.join(out, name), "w") as f:
        json.dump(res, f, indent=1)


def start(build, args, say):
    """vigil ui ARGS --port 0: (process, url, the line that said it, seconds until then);
    None when it exited first (said)."""
    t0 = time.monotonic()
    ui = subprocess.Popen([os.path.join(build, "bin", "vigil"), "ui", *args, "--port", "0"],
                          stderr=subprocess.PIPE, text=True)
    while True:
        line = ui.stderr.readline()
        if not line:
            say("vigil ui exited: %s" % ui.wait())
            return None
        m = re.search(r"serving (http://\S+/)", line)
        if m:
            return ui, m.group(1), line, time.monotonic() - t0


def stop(ui):
    if ui and ui.poll() is None:
        ui.send_signal(signal.SIGINT)
        try:
            ui.wait(timeout=30)
        except subprocess.TimeoutExpired:
            ui.kill()


def page(build, script, *args):
    """Runs bench/SCRIPT ARGS (node); its one JSON line."""
    env = dict(os.environ, NODE_PATH=os.path.join(build, "ui-npm", "node_modules"),
               PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1")
    r = subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), script), *args],
                       env=env, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(r.stdout)
